/**
 * Response wrapping through the real binary: the wrap TTL header (both
 * spellings), wrap_info and nothing else, single use, expiry, the
 * sys/wrapping endpoints, wrapped logins and token creations, and an audit
 * log that shows the wrapping but never the wrapped secret.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { scratchDir, startDevServer, type RunningServer } from '../helpers/server';

let s: RunningServer;
let logFile: string;
const secretValue = `wrapped-${randomBytes(8).toString('hex')}`;

beforeAll(async () => {
  s = await startDevServer({ rootTokenId: `root-${randomBytes(6).toString('hex')}` });
  logFile = join(scratchDir('sr-wrap-'), 'audit.log');
  expect((await s.api('POST', 'sys/audit/file', { type: 'file', options: { file_path: logFile } })).status).toBe(204);
  expect((await s.api('POST', 'secret/data/wrapme', { data: { password: secretValue } })).status).toBe(200);
});
afterAll(async () => {
  await s.stop();
});

const wrapped = (ttl: string, header = 'X-Vault-Wrap-TTL') => ({ headers: { [header]: ttl } });

describe('response wrapping', () => {
  it('answers wrap_info and nothing of the response; unwrap (token in the header) returns it once', async () => {
    const r = await s.api('GET', 'secret/data/wrapme', undefined, wrapped('90s'));
    expect(r.status).toBe(200);
    expect(r.body.data).toBeNull();
    expect(r.body.auth).toBeNull();
    expect(r.text).not.toContain(secretValue);
    const info = r.body.wrap_info;
    expect(info).toMatchObject({ ttl: 90, creation_path: 'secret/data/wrapme' });
    expect(typeof info.token).toBe('string');
    expect(typeof info.accessor).toBe('string');
    expect(Number.isNaN(Date.parse(info.creation_time))).toBe(false);

    const u = await s.api('POST', 'sys/wrapping/unwrap', undefined, { token: info.token });
    expect(u.status).toBe(200);
    expect(u.body.data.data).toEqual({ password: secretValue });
    expect(u.body.wrap_info).toBeNull();

    // Vault's answer for a spent wrapping token, whether in the header or the body.
    const again = await s.api('POST', 'sys/wrapping/unwrap', undefined, { token: info.token });
    expect(again.status).toBe(400);
    expect(again.body.errors).toEqual(['wrapping token is not valid or does not exist']);
    const byBody = await s.api('POST', 'sys/wrapping/unwrap', { token: info.token });
    expect(byBody.status).toBe(400);
    expect(byBody.body.errors.join(' ')).toMatch(/wrapping token is not valid/);
  });

  it('accepts X-Service-Wrap-TTL; unwrap with the token in the body; lookup does not use the token', async () => {
    const r = await s.api('GET', 'secret/data/wrapme', undefined, wrapped('5m', 'X-Service-Wrap-TTL'));
    const token = r.body.wrap_info.token as string;
    expect(r.body.wrap_info.ttl).toBe(300);
    const look = await s.api('POST', 'sys/wrapping/lookup', { token }, { token: null });
    expect(look.status).toBe(200);
    expect(look.body.data).toMatchObject({ creation_ttl: 300, creation_path: 'secret/data/wrapme' });
    // The wrapping token itself in the header of a lookup must not spend its single use.
    expect((await s.api('POST', 'sys/wrapping/lookup', {}, { token })).status).toBe(200);
    const u = await s.api('POST', 'sys/wrapping/unwrap', { token });
    expect(u.status).toBe(200);
    expect(u.body.data.data.password).toBe(secretValue);
    expect((await s.api('POST', 'sys/wrapping/lookup', { token })).status).toBe(400);
  });

  it('a wrapping token can do nothing but unwrap', async () => {
    const token = (await s.api('GET', 'secret/data/wrapme', undefined, wrapped('60'))).body.wrap_info.token as string;
    expect((await s.api('GET', 'secret/data/wrapme', undefined, { token })).status).toBe(403);
    expect((await s.api('GET', 'auth/token/lookup-self', undefined, { token })).status).toBe(403);
    expect((await s.api('POST', 'sys/wrapping/unwrap', undefined, { token })).status).toBe(200);
  });

  it('rewrap moves the response to a new token with the same TTL; the old one stops working', async () => {
    const old = (await s.api('GET', 'secret/data/wrapme', undefined, wrapped('120'))).body.wrap_info.token as string;
    const rw = await s.api('POST', 'sys/wrapping/rewrap', { token: old });
    expect(rw.status).toBe(200);
    expect(rw.body.data).toBeNull();
    expect(rw.body.wrap_info).toMatchObject({ ttl: 120, creation_path: 'secret/data/wrapme' });
    expect(rw.body.wrap_info.token).not.toBe(old);
    expect((await s.api('POST', 'sys/wrapping/unwrap', { token: old })).status).toBe(400);
    const u = await s.api('POST', 'sys/wrapping/unwrap', { token: rw.body.wrap_info.token });
    expect(u.body.data.data.password).toBe(secretValue);
  });

  it('sys/wrapping/wrap wraps arbitrary data (five minutes by default)', async () => {
    const w = await s.api('POST', 'sys/wrapping/wrap', { hello: 'world', n: 3 });
    expect(w.status).toBe(200);
    expect(w.body.wrap_info).toMatchObject({ ttl: 300, creation_path: 'sys/wrapping/wrap' });
    const u = await s.api('POST', 'sys/wrapping/unwrap', { token: w.body.wrap_info.token });
    expect(u.body.data).toEqual({ hello: 'world', n: 3 });
    const w2 = await s.api('POST', 'sys/wrapping/wrap', { a: 'b' }, wrapped('42s'));
    expect(w2.body.wrap_info.ttl).toBe(42);
  });

  it('a wrapped token creation names the created token in wrapped_accessor; the unwrapped token works', async () => {
    const w = await s.api('POST', 'auth/token/create', { policies: ['default'], ttl: '1h' }, wrapped('60s'));
    expect(w.status).toBe(200);
    expect(w.body.auth).toBeNull();
    expect(typeof w.body.wrap_info.wrapped_accessor).toBe('string');
    const u = await s.api('POST', 'sys/wrapping/unwrap', { token: w.body.wrap_info.token });
    expect(u.body.auth.accessor).toBe(w.body.wrap_info.wrapped_accessor);
    expect((await s.api('GET', 'auth/token/lookup-self', undefined, { token: u.body.auth.client_token })).status).toBe(200);
  });

  it('a bad or too long wrap TTL is a 400', async () => {
    for (const bad of ['abc', '-5', '0', '10y']) {
      const r = await s.api('GET', 'secret/data/wrapme', undefined, wrapped(bad));
      expect({ bad, status: r.status }).toEqual({ bad, status: 400 });
    }
    const long = await s.api('GET', 'secret/data/wrapme', undefined, wrapped('99999h'));
    expect(long.status).toBe(400);
    expect(long.body.errors.join(' ')).toMatch(/wrap TTL/i);
  });

  it('a wrapping token expires at its TTL', async () => {
    const token = (await s.api('GET', 'secret/data/wrapme', undefined, wrapped('1s'))).body.wrap_info.token as string;
    await new Promise((r) => setTimeout(r, 1600));
    expect((await s.api('POST', 'sys/wrapping/unwrap', { token })).status).toBe(400);
  });

  it('audit entries show the wrapping (HMAC of the wrapping token), never the wrapped secret', async () => {
    const r = await s.api('GET', 'secret/data/wrapme', undefined, wrapped('60'));
    const log = readFileSync(logFile, 'utf8');
    const lines = log.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const res = lines.filter((e) => e.type === 'response' && e.request.path === 'secret/data/wrapme' && e.response.wrap_info);
    expect(res.length).toBeGreaterThan(0);
    const last = res[res.length - 1];
    expect(last.response.data).toBeNull();
    expect(last.response.wrap_info.token).toMatch(/^hmac-sha256:/);
    expect(last.response.wrap_info.ttl).toBe(60);
    expect(log).not.toContain(r.body.wrap_info.token);
    expect(log).not.toContain(secretValue);
  });
});
