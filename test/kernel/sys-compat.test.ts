/**
 * System endpoints existing Vault clients call, through the real binary:
 * sys/remount (data moves with the mount; its leases and login tokens are
 * revoked first, as in Vault), auth/ revoke-prefix reaching login tokens,
 * sys/tools/random and sys/tools/hash, the legacy sys/renew, sys/revoke and
 * sys/revoke-prefix aliases, login tokens listed under
 * sys/leases/lookup/auth/..., and sys/internal/specs/openapi answering the
 * document itself, seal paths included.
 */
import { createHash } from 'node:crypto';
import { startLeaseServer, type LeaseServer } from '../helpers/lease-plugin';
import { startDevServer, type RunningServer } from '../helpers/server';

jest.setTimeout(60_000);

let s: RunningServer;
beforeAll(async () => {
  s = await startDevServer();
});
afterAll(async () => {
  await s.stop();
});

describe('sys/remount', () => {
  it('moves a kv mount with its data; the old path is gone; the migration status reads success', async () => {
    expect((await s.api('POST', 'sys/mounts/kv-old', { type: 'kv', options: { version: '1' } })).status).toBe(204);
    expect((await s.api('POST', 'kv-old/thing', { v: 'moved-value' })).status).toBe(204);
    const r = await s.api('POST', 'sys/remount', { from: 'kv-old', to: 'kv-new' });
    expect(r.status).toBe(200);
    const id = r.body.data.migration_id as string;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await s.api('GET', 'kv-new/thing')).body.data).toEqual({ v: 'moved-value' });
    expect((await s.api('GET', 'kv-old/thing')).status).toBe(404);
    const mounts = (await s.api('GET', 'sys/mounts')).body.data;
    expect(mounts['kv-new/']).toBeDefined();
    expect(mounts['kv-old/']).toBeUndefined();
    const st = await s.api('GET', `sys/remount/status/${id}`);
    expect(st.body.data).toMatchObject({ migration_id: id, migration_info: { source_mount: 'kv-old', target_mount: 'kv-new/', status: 'success' } });
  });

  async function approleLogin(mount: string): Promise<{ tok: string; roleId: string; secretId: string }> {
    expect((await s.api('POST', `sys/auth/${mount}`, { type: 'approle' })).status).toBe(204);
    expect((await s.api('POST', `auth/${mount}/role/r1`, { token_ttl: '1h', token_policies: ['default'] })).status).toBe(204);
    const roleId = (await s.api('GET', `auth/${mount}/role/r1/role-id`)).body.data.role_id;
    const secretId = (await s.api('POST', `auth/${mount}/role/r1/secret-id`, { num_uses: 0 })).body.data.secret_id;
    const login = await s.api('POST', `auth/${mount}/login`, { role_id: roleId, secret_id: secretId }, { token: null });
    expect(login.status).toBe(200);
    return { tok: login.body.auth.client_token as string, roleId, secretId };
  }
  const alive = async (tok: string) => (await s.api('GET', 'auth/token/lookup-self', undefined, { token: tok })).status;

  it('login tokens are listed, looked up and revoked as leases under sys/leases/lookup/auth/...; revoke-prefix reaches them', async () => {
    const { tok, roleId, secretId } = await approleLogin('ar');
    const listed = await s.api('LIST', 'sys/leases/lookup/auth/ar/login');
    expect(listed.status).toBe(200);
    expect(listed.body.data.keys).toHaveLength(1);
    const leaseId = `auth/ar/login/${listed.body.data.keys[0]}`;
    expect(listed.text).not.toContain(tok);
    const look = await s.api('PUT', 'sys/leases/lookup', { lease_id: leaseId });
    expect(look.status).toBe(200);
    expect(look.body.data).toMatchObject({ id: leaseId, renewable: true });
    expect(look.body.data.ttl).toBeGreaterThan(3000);
    // Revoking the token through its lease id ends it.
    expect((await s.api('PUT', 'sys/leases/revoke', { lease_id: leaseId })).status).toBe(204);
    expect(await alive(tok)).toBe(403);

    // revoke-prefix on the auth mount ends every token it issued, and no other.
    const again = (await s.api('POST', 'auth/ar/login', { role_id: roleId, secret_id: secretId }, { token: null })).body.auth.client_token as string;
    const other = (await approleLogin('ar-other')).tok;
    expect((await s.api('PUT', 'sys/leases/revoke-prefix/auth/ar', {})).status).toBe(204);
    expect(await alive(again)).toBe(403);
    expect(await alive(other)).toBe(200);
  });

  it('moving an auth method revokes the tokens it issued (as Vault does); logins work at the new path only', async () => {
    const { tok, roleId, secretId } = await approleLogin('mv');
    expect(await alive(tok)).toBe(200);
    expect((await s.api('POST', 'sys/remount', { from: 'auth/mv', to: 'auth/mv2' })).status).toBe(200);
    expect(await alive(tok)).toBe(403);
    expect((await s.api('POST', 'auth/mv2/login', { role_id: roleId, secret_id: secretId }, { token: null })).status).toBe(200);
    expect((await s.api('POST', 'auth/mv/login', { role_id: roleId, secret_id: secretId }, { token: null })).status).toBeGreaterThanOrEqual(400);
  });

  it('disabling an auth method revokes the tokens it issued', async () => {
    const { tok } = await approleLogin('gone');
    expect((await s.api('DELETE', 'sys/auth/gone')).status).toBe(204);
    expect(await alive(tok)).toBe(403);
  });

  it('refuses a move onto a used path, across tables, and of a system mount', async () => {
    expect((await s.api('POST', 'sys/remount', { from: 'kv-new', to: 'secret' })).status).toBe(400);
    expect((await s.api('POST', 'sys/remount', { from: 'kv-new', to: 'auth/kv' })).status).toBe(400);
    expect((await s.api('POST', 'sys/remount', { from: 'sys', to: 'sys2' })).status).toBe(400);
    expect((await s.api('POST', 'sys/remount', { from: 'nothing-here', to: 'x' })).status).toBe(400);
  });
});

describe('sys/tools', () => {
  it('random: default 32 bytes base64; a byte count in the path; hex', async () => {
    const a = await s.api('POST', 'sys/tools/random', {});
    expect(Buffer.from(a.body.data.random_bytes, 'base64')).toHaveLength(32);
    const b = await s.api('POST', 'sys/tools/random/16', { format: 'hex' });
    expect(b.body.data.random_bytes).toMatch(/^[0-9a-f]{32}$/);
    expect((await s.api('POST', 'sys/tools/random', { bytes: 0 })).status).toBe(400);
  });

  it('hash: sha2-256 by default, an algorithm in the path, base64 output', async () => {
    const input = Buffer.from('hello vault').toString('base64');
    const a = await s.api('POST', 'sys/tools/hash', { input });
    expect(a.body.data.sum).toBe(createHash('sha256').update('hello vault').digest('hex'));
    const b = await s.api('POST', 'sys/tools/hash/sha2-512', { input, format: 'base64' });
    expect(b.body.data.sum).toBe(createHash('sha512').update('hello vault').digest('base64'));
    const bad = await s.api('POST', 'sys/tools/hash', { input: 'not base64!' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.join(' ')).toMatch(/input/);
  });
});

describe('legacy lease aliases', () => {
  let ls: LeaseServer;
  beforeAll(async () => {
    ls = await startLeaseServer();
    expect((await ls.api('POST', 'lt/roles/r', { ttl: 300, max_ttl: 3600 })).status).toBe(204);
  });
  afterAll(async () => {
    await ls.stop('SIGKILL');
  });
  const issue = async () => (await ls.api('GET', 'lt/creds/r')).body.lease_id as string;

  it('sys/renew renews a lease (body or path), sys/revoke revokes one', async () => {
    const id = await issue();
    const a = await ls.api('PUT', 'sys/renew', { lease_id: id, increment: 600 });
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({ lease_id: id, renewable: true, lease_duration: 600 });
    const b = await ls.api('PUT', `sys/renew/${id}`, { increment: 700 });
    expect(b.body.lease_duration).toBe(700);
    expect((await ls.api('PUT', `sys/revoke/${id}`, { sync: true })).status).toBe(204);
    expect((await ls.api('PUT', 'sys/leases/lookup', { lease_id: id })).status).toBe(400);
  });

  it('sys/revoke-prefix revokes every lease below a prefix, and needs sudo', async () => {
    const ids = [await issue(), await issue()];
    expect((await ls.api('POST', 'sys/policies/acl/no-sudo', { policy: 'path "sys/revoke-prefix/*" { capabilities = ["update"] }' })).status).toBe(204);
    const t = (await ls.api('POST', 'auth/token/create', { policies: ['no-sudo'] })).body.auth.client_token;
    expect((await ls.api('PUT', 'sys/revoke-prefix/lt/creds/r', {}, { token: t })).status).toBe(403);
    expect((await ls.api('PUT', 'sys/revoke-prefix/lt/creds/r', { sync: true })).status).toBe(204);
    for (const id of ids) expect((await ls.api('PUT', 'sys/leases/lookup', { lease_id: id })).status).toBe(400);
  });
});

describe('sys/internal/specs/openapi', () => {
  it('answers the OpenAPI document itself, with the seal paths', async () => {
    const r = await s.api('GET', 'sys/internal/specs/openapi');
    expect(r.status).toBe(200);
    expect(r.body.openapi).toMatch(/^3\./);
    expect(r.body.request_id).toBeUndefined();
    for (const p of ['/sys/health', '/sys/seal-status', '/sys/init', '/sys/unseal', '/sys/leader', '/sys/wrapping/unwrap', '/sys/generate-root/attempt', '/sys/rekey/init', '/sys/remount', '/secret/data/{path}']) {
      expect(Object.keys(r.body.paths)).toContain(p);
    }
  });
});
