/**
 * Issue 26, finding 3, replayed against the real binary: a policy's
 * `min_wrapping_ttl` and `max_wrapping_ttl` hold after the ACL allowed the
 * operation. With a minimum on a path, a read without wrapping is refused
 * (the minimum makes wrapping mandatory); a wrap TTL outside the bounds is
 * refused; bounds of the same path in several policies merge as Vault merges
 * them (the smaller minimum, the smaller maximum). Refusals are Vault's: a
 * permission the policies do not grant (403).
 */
import { startDevServer, tokenWithPolicy, type RunningServer } from '../helpers/server';

jest.setTimeout(60_000);

let s: RunningServer;
beforeAll(async () => {
  s = await startDevServer();
  expect((await s.api('PUT', 'secret/data/x', { data: { password: 'plaintext' } })).status).toBe(200);
});
afterAll(async () => {
  await s.stop('SIGKILL');
});

const bounded = 'path "secret/data/x" {\n  capabilities = ["read"]\n  min_wrapping_ttl = "60s"\n  max_wrapping_ttl = "120s"\n}';
const read = (token: string, wrapTtl?: string) => s.api('GET', 'secret/data/x', undefined, { token, ...(wrapTtl ? { headers: { 'X-Vault-Wrap-TTL': wrapTtl } } : {}) });

describe('min_wrapping_ttl and max_wrapping_ttl', () => {
  it('a read without wrapping is refused and shows no plaintext', async () => {
    const t = await tokenWithPolicy(s, bounded);
    const r = await read(t);
    expect(r.status).toBe(403);
    expect(r.text).not.toContain('plaintext');
  });

  it('a wrap TTL above the maximum or below the minimum is refused', async () => {
    const t = await tokenWithPolicy(s, bounded);
    for (const ttl of ['1000', '121s', '59', '1s']) {
      const r = await read(t, ttl);
      expect([ttl, r.status]).toEqual([ttl, 403]);
      expect(r.text).not.toContain('plaintext');
    }
  });

  it('a wrap TTL within the bounds is wrapped, and the wrapping token unwraps the secret', async () => {
    const t = await tokenWithPolicy(s, bounded);
    for (const ttl of ['60', '90s', '2m']) {
      const r = await read(t, ttl);
      expect(r.status).toBe(200);
      expect(r.body.data).toBeNull();
      expect(r.text).not.toContain('plaintext');
      const unwrapped = await s.api('POST', 'sys/wrapping/unwrap', {}, { token: r.body.wrap_info.token });
      expect(unwrapped.body.data.data).toEqual({ password: 'plaintext' });
    }
  });

  it('a maximum alone also requires wrapping, as in Vault', async () => {
    const t = await tokenWithPolicy(s, 'path "secret/data/x" {\n  capabilities = ["read"]\n  max_wrapping_ttl = "120s"\n}');
    expect((await read(t)).status).toBe(403);
    expect((await read(t, '30')).status).toBe(200);
  });

  it('the same path in two policies: the smaller minimum and the smaller maximum apply', async () => {
    const a = 'path "secret/data/x" {\n  capabilities = ["read"]\n  min_wrapping_ttl = "60s"\n  max_wrapping_ttl = "300s"\n}';
    const b = 'path "secret/data/x" {\n  capabilities = ["read"]\n  min_wrapping_ttl = "30s"\n  max_wrapping_ttl = "120s"\n}';
    for (const [name, policy] of [['wrap-a', a], ['wrap-b', b]]) expect((await s.api('PUT', `sys/policies/acl/${name}`, { policy })).status).toBe(204);
    const token = (await s.api('POST', 'auth/token/create', { policies: ['wrap-a', 'wrap-b'] })).body.auth.client_token as string;
    expect((await read(token)).status).toBe(403);
    expect((await read(token, '30')).status).toBe(200);
    expect((await read(token, '20')).status).toBe(403);
    expect((await read(token, '200')).status).toBe(403);
  });

  it('a root token is not bound by policies, and paths without bounds need no wrapping', async () => {
    expect((await read(s.rootToken)).status).toBe(200);
    const t = await tokenWithPolicy(s, 'path "secret/data/x" { capabilities = ["read"] }');
    expect((await read(t)).status).toBe(200);
  });
});
