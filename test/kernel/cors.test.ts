/**
 * sys/config/cors through the real binary: off by default; once set, a
 * browser's request from another origin gets 403 and reaches nothing, a
 * preflight gets the allowed methods and headers, an allowed origin's answer
 * names it; requests without Origin are untouched; the setting needs sudo,
 * survives a restart (and applies while sealed) and DELETE turns it off.
 */
import { restartLeaseServer, startLeaseServer, type LeaseServer } from '../helpers/lease-plugin';
import { tokenWithPolicy } from '../helpers/server';

jest.setTimeout(120_000);

let s: LeaseServer;
beforeAll(async () => {
  s = await startLeaseServer();
});
afterAll(async () => {
  await s.stop();
});

const raw = (path: string, init: RequestInit & { origin?: string } = {}) => {
  const headers: Record<string, string> = { ...(init.headers as Record<string, string>) };
  if (init.origin) headers.Origin = init.origin;
  return fetch(`${s.url}/v1/${path}`, { ...init, headers });
};

it('is off by default: an Origin header changes nothing and OPTIONS is not a method', async () => {
  const r = await s.api('GET', 'sys/config/cors');
  expect(r.body.data).toEqual({ enabled: false, allowed_origins: [], allowed_headers: [] });
  const plain = await raw('sys/health', { origin: 'https://elsewhere.example' });
  expect(plain.status).toBe(200);
  expect(plain.headers.get('access-control-allow-origin')).toBeNull();
  expect((await raw('sys/health', { method: 'OPTIONS', origin: 'https://elsewhere.example' })).status).toBe(405);
});

it('refuses bad settings with a 400 naming the field, and needs sudo', async () => {
  expect((await s.api('POST', 'sys/config/cors', {})).body.errors[0]).toMatch(/^allowed_origins:/);
  expect((await s.api('POST', 'sys/config/cors', { allowed_origins: ['*', 'https://a.example'] })).status).toBe(400);
  const noSudo = await tokenWithPolicy(s, 'path "sys/config/cors" { capabilities = ["create", "read", "update", "delete"] }');
  expect((await s.api('POST', 'sys/config/cors', { allowed_origins: '*' }, { token: noSudo })).status).toBe(403);
  expect((await s.api('GET', 'sys/config/cors', undefined, { token: noSudo })).status).toBe(403);
});

it('once set: other origins get 403, preflights 204 with methods and headers, allowed answers name the origin', async () => {
  expect((await s.api('POST', 'sys/config/cors', { allowed_origins: 'https://app.example,https://ops.example', allowed_headers: 'X-Custom-Header' })).status).toBe(204);
  const cfg = (await s.api('GET', 'sys/config/cors')).body.data;
  expect(cfg.enabled).toBe(true);
  expect(cfg.allowed_origins).toEqual(['https://app.example', 'https://ops.example']);
  expect(cfg.allowed_headers).toEqual(expect.arrayContaining(['Content-Type', 'X-Vault-Token', 'X-Service-Token', 'X-Custom-Header']));

  // A refused origin reaches nothing: the write below is not made.
  const refused = await raw('secret/data/from-evil', { method: 'POST', origin: 'https://evil.example', headers: { 'X-Service-Token': s.rootToken, 'Content-Type': 'application/json' }, body: JSON.stringify({ data: { a: 1 } }) });
  expect(refused.status).toBe(403);
  expect(await refused.json()).toEqual({ errors: ['origin not allowed'] });
  expect((await s.api('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } })).status).toBe(204);
  expect((await s.api('GET', 'secret/data/from-evil')).status).toBe(404);

  const pre = await raw('secret/data/x', { method: 'OPTIONS', origin: 'https://app.example', headers: { 'Access-Control-Request-Method': 'POST' } });
  expect(pre.status).toBe(204);
  expect(pre.headers.get('access-control-allow-origin')).toBe('https://app.example');
  expect(pre.headers.get('access-control-allow-methods')).toContain('POST');
  expect(pre.headers.get('access-control-allow-headers')).toContain('X-Custom-Header');
  expect(pre.headers.get('vary')).toBe('Origin');

  const ok = await raw('secret/data/x', { method: 'POST', origin: 'https://ops.example', headers: { 'X-Service-Token': s.rootToken, 'Content-Type': 'application/json' }, body: JSON.stringify({ data: { a: 1 } }) });
  expect(ok.status).toBe(200);
  expect(ok.headers.get('access-control-allow-origin')).toBe('https://ops.example');
  // Errors carry the header too, so the browser lets the page read them.
  const denied = await raw('secret/data/x', { origin: 'https://ops.example', headers: { 'X-Service-Token': 'not-a-token' } });
  expect(denied.status).toBe(403);
  expect(denied.headers.get('access-control-allow-origin')).toBe('https://ops.example');

  // No Origin: every non-browser client is untouched.
  const cli = await raw('sys/health');
  expect(cli.status).toBe(200);
  expect(cli.headers.get('access-control-allow-origin')).toBeNull();
});

it('survives a restart, applies while sealed, and DELETE turns it off', async () => {
  await s.stop('SIGTERM');
  s = await restartLeaseServer(s);
  expect((await s.api('GET', 'sys/config/cors')).body.data.allowed_origins).toEqual(['https://app.example', 'https://ops.example']);
  expect((await s.api('POST', 'sys/seal', {})).status).toBe(204);
  expect((await raw('sys/seal-status', { origin: 'https://evil.example' })).status).toBe(403);
  expect((await raw('sys/seal-status', { origin: 'https://app.example' })).headers.get('access-control-allow-origin')).toBe('https://app.example');
  for (const key of s.unsealKeys) await s.api('POST', 'sys/unseal', { key }, { token: null });

  expect((await s.api('DELETE', 'sys/config/cors')).status).toBe(204);
  expect((await s.api('GET', 'sys/config/cors')).body.data.enabled).toBe(false);
  expect((await raw('sys/health', { origin: 'https://evil.example' })).status).toBe(200);
});
