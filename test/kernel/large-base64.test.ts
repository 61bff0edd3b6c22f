/**
 * Near-limit request bodies (the listener's default 32 MiB) carrying a
 * base64 value of every kind the service validates, through the real binary
 * and its transit plugin process. A backtracking base64 regex overflowed on
 * these and answered "invalid value" (or worse); each must now be decoded as
 * base64, and the request judged on what it means.
 */
import { createHash, randomBytes } from 'node:crypto';
import { startDevServer, type RunningServer } from '../helpers/server';

jest.setTimeout(180_000);

let s: RunningServer;
/** 23.5 MiB of bytes: their base64 (~31.3 MiB) leaves room for the JSON around it under 32 MiB. */
const RAW = randomBytes(Math.floor(23.5 * 1024 * 1024));
const B64 = RAW.toString('base64');
const LIMIT = 32 * 1024 * 1024;

beforeAll(async () => {
  s = await startDevServer();
  expect((await s.api('POST', 'sys/mounts/transit', { type: 'transit' })).status).toBe(204);
  expect((await s.api('POST', 'transit/keys/k')).status).toBe(204);
  expect((await s.api('POST', 'transit/keys/ec', { type: 'ecdsa-p256' })).status).toBe(204);
});
afterAll(async () => {
  await s.stop();
});

function bodyOf(o: unknown): string {
  const text = JSON.stringify(o);
  expect(text.length).toBeGreaterThan(30 * 1024 * 1024);
  expect(text.length).toBeLessThan(LIMIT);
  return text;
}

async function post(path: string, body: unknown) {
  const res = await fetch(`${s.url}/v1/${path}`, { method: 'POST', headers: { 'X-Vault-Token': s.rootToken }, body: bodyOf(body) });
  const text = await res.text();
  return { status: res.status, text, body: text.startsWith('{') ? JSON.parse(text) : null };
}

describe('near-32 MiB bodies with base64 values', () => {
  it('an SDK base64 field (transit hash input)', async () => {
    const r = await post('transit/hash/sha2-256', { input: B64 });
    expect(r.status).toBe(200);
    expect(r.body.data.sum).toBe(createHash('sha256').update(RAW).digest('hex'));
  });

  it('the same field kind in the core (sys/tools/hash input)', async () => {
    const r = await post('sys/tools/hash', { input: B64, algorithm: 'sha2-512' });
    expect(r.status).toBe(200);
    expect(r.body.data.sum).toBe(createHash('sha512').update(RAW).digest('hex'));
  });

  it('an engine-decoded value and a ciphertext payload (transit encrypt, then decrypt)', async () => {
    const enc = await post('transit/encrypt/k', { plaintext: B64 });
    expect(enc.status).toBe(200);
    const ciphertext = enc.body.data.ciphertext as string;
    expect(ciphertext).toMatch(/^service:v1:/);
    const dec = await post('transit/decrypt/k', { ciphertext });
    expect(dec.status).toBe(200);
    expect(dec.body.data.plaintext === B64).toBe(true);
  });

  it('a base64 value inside batch_input items (transit hmac)', async () => {
    const half = RAW.subarray(0, RAW.length / 2).toString('base64');
    const r = await post('transit/hmac/k', { batch_input: [{ input: half }, { input: half }] });
    expect(r.status).toBe(200);
    expect(r.body.data.batch_results).toHaveLength(2);
    expect(r.body.data.batch_results[0].hmac).toMatch(/^service:v1:/);
  });

  it('a bad character at the very end of a near-limit value is still "invalid base64", not an overflow', async () => {
    const r = await post('transit/hash', { input: `${B64.slice(0, -4)}AA*=` });
    expect(r.status).toBe(400);
    expect(r.text).toMatch(/input/);
  });

  it('a base64url JWS signature (transit verify)', async () => {
    const sig = `service:v1:${RAW.toString('base64url')}`;
    const r = await post('transit/verify/ec', { input: 'aGVsbG8=', signature: sig, marshaling_algorithm: 'jws' });
    expect(r.status).toBeLessThan(500);
    expect(r.text).not.toMatch(/base64url-decode|Maximum call stack/);
    if (r.status === 200) expect(r.body.data.valid).toBe(false);
  });

  it('a base64-encoded policy document (sys/policies/acl)', async () => {
    const doc = `path "big/*" { capabilities = ["read"] }\n${'#'.repeat(23 * 1024 * 1024)}\n`;
    const r = await post('sys/policies/acl/big', { policy: Buffer.from(doc).toString('base64') });
    expect(r.status).toBe(204);
    const back = await s.api('GET', 'sys/policies/acl/big');
    expect(back.body.data.policy.startsWith('path "big/*"')).toBe(true);
  });

  it('a key share (sys/generate-root/update): judged as a share, not as malformed text', async () => {
    const start = await s.api('PUT', 'sys/generate-root/attempt', {}, { token: null });
    const r = await post('sys/generate-root/update', { key: B64, nonce: start.body.nonce });
    expect(r.status).toBe(400);
    expect(r.text).toMatch(/do not combine/);
    expect((await s.api('DELETE', 'sys/generate-root/attempt', undefined, { token: null })).status).toBe(204);
  });
});
