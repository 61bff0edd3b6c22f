/**
 * What Vault's clients send and check, through the real binary (issue 27):
 * empty strings as zero values, the status codes and texts client test
 * suites assert, values they pass (PSS salt -1, cas -1, an empty wrap), mount
 * tune answering the effective TTLs, and `generic` as kv version 1.
 */
import { startDevServer, type RunningServer } from '../helpers/server';

let s: RunningServer;
beforeAll(async () => {
  s = await startDevServer();
  expect((await s.api('POST', 'sys/mounts/transit', { type: 'transit' })).status).toBe(204);
});
afterAll(async () => {
  await s.stop();
});

describe('empty strings are zero values', () => {
  it('in booleans, integers and durations of any engine (SSH role, transit key, kv config)', async () => {
    expect((await s.api('POST', 'sys/mounts/ssh', { type: 'ssh' })).status).toBe(204);
    const role = await s.api('POST', 'ssh/roles/empty', { key_type: 'ca', allow_user_certificates: '', allow_host_certificates: 'true', allowed_users_template: '', ttl: '', max_ttl: '' });
    expect(role.status).toBe(204);
    expect((await s.api('GET', 'ssh/roles/empty')).body.data).toMatchObject({ allow_user_certificates: false, allow_host_certificates: true, allowed_users_template: false });

    expect((await s.api('POST', 'transit/keys/empty', { exportable: '', allow_plaintext_backup: '', auto_rotate_period: '' })).status).toBeLessThan(300);
    expect((await s.api('GET', 'transit/keys/empty')).body.data).toMatchObject({ exportable: false, allow_plaintext_backup: false, auto_rotate_period: 0 });

    expect((await s.api('POST', 'secret/config', { max_versions: '', cas_required: '', delete_version_after: '' })).status).toBeLessThan(300);
    expect((await s.api('GET', 'secret/config')).body.data).toMatchObject({ max_versions: 0, cas_required: false });
  });
});

describe('status codes and texts clients check', () => {
  it('auth/token/lookup and lookup-accessor of a revoked token: 403', async () => {
    const created = (await s.api('POST', 'auth/token/create', { policies: ['default'] })).body.auth;
    expect((await s.api('POST', 'auth/token/revoke', { token: created.client_token })).status).toBe(204);
    const byToken = await s.api('POST', 'auth/token/lookup', { token: created.client_token });
    expect(byToken.status).toBe(403);
    expect(byToken.body.errors).toEqual(['bad token']);
    expect((await s.api('POST', 'auth/token/lookup', { token: 'never-issued' })).status).toBe(403);
    const byAccessor = await s.api('POST', 'auth/token/lookup-accessor', { accessor: created.accessor });
    expect(byAccessor.status).toBe(403);
    expect(byAccessor.body.errors).toEqual(['invalid accessor']);
  });

  it('unwrap with a spent wrapping token in the token header: 400 "wrapping token is not valid or does not exist"', async () => {
    const wrapped = await s.api('POST', 'sys/wrapping/wrap', { k: 'v' }, { headers: { 'X-Vault-Wrap-TTL': '60s' } });
    const wt = wrapped.body.wrap_info.token as string;
    expect((await s.api('POST', 'sys/wrapping/unwrap', {}, { token: wt })).body.data).toEqual({ k: 'v' });
    const again = await s.api('POST', 'sys/wrapping/unwrap', {}, { token: wt });
    expect(again.status).toBe(400);
    expect(again.body.errors).toEqual(['wrapping token is not valid or does not exist']);
    // Any other path with that token is still a plain 403.
    expect((await s.api('GET', 'secret/data/x', undefined, { token: wt })).status).toBe(403);
  });

  it('sys/audit-hash of a path without a device: 400 "unknown audit backend"', async () => {
    const r = await s.api('POST', 'sys/audit-hash/nothing-here', { input: 'x' });
    expect(r.status).toBe(400);
    expect(r.body.errors.join(' ')).toContain('unknown audit backend');
  });

  it('transit backup without allow_plaintext_backup and restore onto an existing key: 500 with Vault\'s texts', async () => {
    await s.api('POST', 'transit/keys/no-backup', {});
    const backup = await s.api('GET', 'transit/backup/no-backup');
    expect(backup.status).toBe(500);
    expect(backup.body.errors.join(' ')).toContain('plaintext backup is disallowed on the policy');

    await s.api('POST', 'transit/keys/backed', { allow_plaintext_backup: true, exportable: true });
    const blob = (await s.api('GET', 'transit/backup/backed')).body.data.backup as string;
    const restore = await s.api('POST', 'transit/restore', { backup: blob });
    expect(restore.status).toBe(500);
    expect(restore.body.errors.join(' ')).toContain('key "backed" already exists');
    expect((await s.api('POST', 'transit/restore', { backup: blob, force: true })).status).toBe(204);
  });
});

describe('values clients pass', () => {
  it('transit PSS salt_length "-1" (auto) and "-2" (hash length)', async () => {
    await s.api('POST', 'transit/keys/rsa', { type: 'rsa-2048' });
    const input = Buffer.from('signed').toString('base64');
    for (const salt of ['-1', '-2', -1]) {
      const sig = await s.api('POST', 'transit/sign/rsa', { input, signature_algorithm: 'pss', salt_length: salt });
      expect(sig.status).toBe(200);
      const ok = await s.api('POST', 'transit/verify/rsa', { input, signature: sig.body.data.signature, signature_algorithm: 'pss', salt_length: salt });
      expect(ok.body.data.valid).toBe(true);
    }
    expect((await s.api('POST', 'transit/sign/rsa', { input, signature_algorithm: 'pss', salt_length: '-3' })).status).toBe(400);
  });

  it('kv v2 options.cas -1: 400 "check-and-set parameter did not match the current version"', async () => {
    const r = await s.api('POST', 'secret/data/cas', { data: { a: 1 }, options: { cas: -1 } });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['check-and-set parameter did not match the current version']);
    expect((await s.api('POST', 'secret/data/cas', { data: { a: 1 }, options: { cas: '-1' } })).status).toBe(400);
  });

  it('sys/wrapping/wrap with an empty object wraps it', async () => {
    const r = await s.api('POST', 'sys/wrapping/wrap', {}, { headers: { 'X-Vault-Wrap-TTL': '60s' } });
    expect(r.status).toBe(200);
    const un = await s.api('POST', 'sys/wrapping/unwrap', { token: r.body.wrap_info.token });
    expect(un.status).toBe(200);
    expect(un.body.data).toEqual({});
  });
});

describe('mount tune shows the effective TTLs', () => {
  it('the system values when the mount sets none, the mount\'s when it does', async () => {
    for (const path of ['sys/mounts/secret/tune', 'sys/auth/token/tune']) {
      const r = await s.api('GET', path);
      expect(r.body.data).toMatchObject({ default_lease_ttl: 2764800, max_lease_ttl: 2764800 });
    }
    await s.api('POST', 'sys/mounts/transit/tune', { default_lease_ttl: '1h' });
    expect((await s.api('GET', 'sys/mounts/transit/tune')).body.data).toMatchObject({ default_lease_ttl: 3600, max_lease_ttl: 2764800 });
  });
});

describe('generic', () => {
  it('is a mount type: kv version 1', async () => {
    expect((await s.api('POST', 'sys/mounts/old-generic', { type: 'generic' })).status).toBe(204);
    expect((await s.api('PUT', 'old-generic/app', { password: 'pw' })).status).toBe(204);
    expect((await s.api('GET', 'old-generic/app')).body.data).toEqual({ password: 'pw' });
    expect((await s.api('GET', 'sys/mounts')).body.data['old-generic/']).toMatchObject({ type: 'kv', options: { version: '1' } });
  });
});
