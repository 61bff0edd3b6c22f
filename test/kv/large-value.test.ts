/**
 * A kv-v2 secret of about 30 MiB (one string value, near the listener's default 32 MiB limit)
 * through the real binary and the kv plugin process: it reads back exactly, multi-byte UTF-8
 * and JSON escapes included. The body reaches the plugin as the bytes the client sent (the
 * core does not serialise it again), in slices through the barrier, and from one buffer the
 * listener fills as it arrives; each must keep it intact. Memory is measured in the bench
 * (scripts/bench/sections/large-bodies.js), not here.
 */
import { randomBytes } from 'node:crypto';
import { startDevServer, type RunningServer } from '../helpers/server';

jest.setTimeout(180_000);

let s: RunningServer;
beforeAll(async () => {
  s = await startDevServer();
});
afterAll(async () => s?.stop());

test('a 30 MiB kv-v2 value round-trips exactly', async () => {
  // Base64 text with a multi-byte character, a quote, a backslash and a newline spread through it.
  const chunk = randomBytes(3 * 1024 * 1024).toString('base64');
  const value = Array.from({ length: 7 }, (_, i) => `${chunk}é"\\\n${i}€`).join('');
  const body = JSON.stringify({ data: { value, small: 'x' } });
  expect(Buffer.byteLength(body)).toBeGreaterThan(28 * 1024 * 1024);
  expect(Buffer.byteLength(body)).toBeLessThan(32 * 1024 * 1024);

  const put = await fetch(`${s.url}/v1/secret/data/large`, { method: 'PUT', headers: { 'X-Vault-Token': s.rootToken, 'Content-Type': 'application/json' }, body });
  expect(put.status).toBe(200);
  expect((await put.json()).data.version).toBe(1);

  const read = await s.api('GET', 'secret/data/large');
  expect(read.status).toBe(200);
  expect(read.body.data.data.small).toBe('x');
  expect(read.body.data.data.value.length).toBe(value.length);
  expect(read.body.data.data.value === value).toBe(true);
});
