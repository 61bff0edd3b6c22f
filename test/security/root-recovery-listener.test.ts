/**
 * Issue 26, finding 11, through the real binary: unauthenticated generate-root
 * and rekey stay served by default (Vault's behaviour), a listener with
 * OpenBao's `disable_unauthed_generate_root_endpoints` and
 * `disable_unauthed_rekey_endpoints` refuses them whatever the spelling of
 * the path, and the authenticated forms (sys/generate-root-token/*,
 * sys/rotate/root/*) run the same ceremonies for a token with sudo only.
 */
import { startConfigServer, tokenWithPolicy, type RunningServer } from '../helpers/server';

jest.setTimeout(60_000);

// $PORT: the default listener; $PORT2: one with both switches on.
const CONFIG = `storage "level" { path = "$DIR/data" }
listener "tcp" { address = "127.0.0.1:$PORT" tls_disable = true }
listener "tcp" {
  address = "127.0.0.1:$PORT2"
  tls_disable = true
  disable_unauthed_generate_root_endpoints = true
  disable_unauthed_rekey_endpoints = "true"
}
`;

let s: RunningServer & { port2: number };
let keys: string[] = [];

beforeAll(async () => {
  s = await startConfigServer(CONFIG);
  const init = await s.api('POST', 'sys/init', { secret_shares: 1, secret_threshold: 1 }, { token: null });
  expect(init.status).toBe(200);
  keys = init.body.keys;
  s.rootToken = init.body.root_token;
  expect((await s.api('POST', 'sys/unseal', { key: keys[0] }, { token: null })).body.sealed).toBe(false);
});
afterAll(async () => {
  await s.stop('SIGKILL');
});

/** A request to the listener with both switches on. */
async function closed(method: string, path: string, body?: unknown, token: string | null = null) {
  const headers: Record<string, string> = token ? { 'X-Vault-Token': token } : {};
  const r = await fetch(`http://127.0.0.1:${s.port2}/v1/${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : null };
}

function decodeRoot(encoded: string, otp: string): string {
  const raw = Buffer.from(encoded, 'base64');
  return Buffer.from(raw.map((b, i) => b ^ otp.charCodeAt(i))).toString('utf8');
}

describe('a listener with disable_unauthed_generate_root_endpoints and disable_unauthed_rekey_endpoints', () => {
  it.each([
    ['PUT', 'sys/generate-root/attempt', {}],
    ['GET', 'sys/generate-root/attempt', undefined],
    ['DELETE', 'sys/generate-root/attempt', undefined],
    ['PUT', 'sys/generate-root/update', { key: 'x', nonce: 'y' }],
    ['PUT', 'sys/generate-root/attempt/', {}],
    ['PUT', 'SYS/Generate-Root/attempt', {}],
    ['PUT', 'sys//generate-root/attempt', {}],
    ['PUT', 'sys/rekey/init', { secret_shares: 1, secret_threshold: 1 }],
    ['DELETE', 'sys/rekey/init', undefined],
    ['PUT', 'sys/rekey/update', { key: 'x', nonce: 'y' }],
    // A static seal's recovery-key rekey goes with the rekey switch.
    ['PUT', 'sys/rekey-recovery-key/init', { secret_shares: 1, secret_threshold: 1 }],
    ['PUT', 'SYS/Rekey-Recovery-Key/update', { key: 'x', nonce: 'y' }],
    ['PUT', 'sys/rekey-recovery-key/verify', { key: 'x', nonce: 'y' }],
  ])('refuses %s %s, even with a root token', async (method, path, body) => {
    for (const token of [null, s.rootToken]) {
      const r = await closed(method, path, body, token);
      expect([token !== null, r.status]).toEqual([token !== null, 405]);
      expect(r.body.errors.join(' ')).toMatch(/disabled on this listener/);
    }
    // Nothing was started on the server either.
    expect((await s.api('GET', 'sys/generate-root/attempt', undefined, { token: null })).body.started).toBe(false);
    expect((await s.api('GET', 'sys/rekey/init', undefined, { token: null })).body.started).toBe(false);
  });

  it('serves everything else as usual', async () => {
    expect((await closed('GET', 'sys/seal-status')).status).toBe(200);
    expect((await closed('GET', 'sys/mounts', undefined, s.rootToken)).status).toBe(200);
  });
});

describe('the default listener keeps Vault\'s unauthenticated ceremonies', () => {
  it('starts and cancels a root generation and a rekey without a token', async () => {
    expect((await s.api('PUT', 'sys/generate-root/attempt', {}, { token: null })).body.started).toBe(true);
    expect((await s.api('DELETE', 'sys/generate-root/attempt', undefined, { token: null })).status).toBe(204);
    expect((await s.api('PUT', 'sys/rekey/init', { secret_shares: 1, secret_threshold: 1 }, { token: null })).body.started).toBe(true);
    expect((await s.api('DELETE', 'sys/rekey/init', undefined, { token: null })).status).toBe(204);
  });
});

describe('the authenticated forms need a token with sudo', () => {
  it('refuses no token, and a token with every capability but sudo', async () => {
    const noSudo = await tokenWithPolicy(s, 'path "sys/generate-root-token/*" { capabilities = ["create", "read", "update", "delete"] }\npath "sys/rotate/root/*" { capabilities = ["create", "read", "update", "delete"] }');
    for (const token of [null, noSudo]) {
      for (const [method, path] of [['PUT', 'sys/generate-root-token/attempt'], ['GET', 'sys/generate-root-token/attempt'], ['DELETE', 'sys/generate-root-token/attempt'], ['PUT', 'sys/rotate/root/init'], ['DELETE', 'sys/rotate/root/init']] as const) {
        expect([path, (await closed(method, path, method === 'PUT' ? {} : undefined, token)).status]).toEqual([path, 403]);
      }
    }
  });

  it('generates a root token on the closed listener with a sudo token, answered in the envelope', async () => {
    const sudo = await tokenWithPolicy(s, 'path "sys/generate-root-token/*" { capabilities = ["read", "update", "delete", "sudo"] }');
    const started = await closed('PUT', 'sys/generate-root-token/attempt', {}, sudo);
    expect(started.status).toBe(200);
    expect(started.body.data).toMatchObject({ started: true, required: 1, otp_length: 28 });
    expect((await closed('GET', 'sys/generate-root-token/attempt', undefined, sudo)).body.data).toMatchObject({ started: true, progress: 0 });
    const done = await closed('PUT', 'sys/generate-root-token/update', { key: keys[0], nonce: started.body.data.nonce }, sudo);
    expect(done.status).toBe(200);
    expect(done.body.data.complete).toBe(true);
    const root = decodeRoot(done.body.data.encoded_token, started.body.data.otp);
    expect((await s.api('GET', 'auth/token/lookup-self', undefined, { token: root })).body.data.policies).toEqual(['root']);
  });

  it('rekeys through sys/rotate/root with a sudo token: the new share unseals, the old one no longer does', async () => {
    const sudo = await tokenWithPolicy(s, 'path "sys/rotate/root/*" { capabilities = ["read", "update", "delete", "sudo"] }');
    const init = await closed('PUT', 'sys/rotate/root/init', { secret_shares: 1, secret_threshold: 1 }, sudo);
    expect(init.status).toBe(200);
    expect(init.body.data).toMatchObject({ started: true, n: 1, t: 1 });
    const done = await closed('PUT', 'sys/rotate/root/update', { key: keys[0], nonce: init.body.data.nonce }, sudo);
    expect(done.body.data.complete).toBe(true);
    const fresh: string = done.body.data.keys[0];
    expect((await s.api('POST', 'sys/seal')).status).toBe(204);
    expect((await s.api('POST', 'sys/unseal', { key: keys[0] }, { token: null })).status).toBe(400);
    expect((await s.api('POST', 'sys/unseal', { key: fresh }, { token: null })).body.sealed).toBe(false);
  });
});
