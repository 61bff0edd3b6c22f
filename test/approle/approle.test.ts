/**
 * AppRole end to end: the real binary and the approle plugin process. Role,
 * SecretID, login; the issued token is bound by the role's policies, CIDRs and
 * TTLs; SecretID uses are spent exactly once under concurrent logins.
 */
import { startDevServer, type RunningServer } from '../helpers/server';

let s: RunningServer;
beforeAll(async () => {
  s = await startDevServer();
  expect((await s.api('POST', 'sys/auth/approle', { type: 'approle' })).status).toBe(204);
  await s.api('PUT', 'sys/policies/acl/app', { policy: 'path "secret/data/app/*" { capabilities = ["read"] }' });
  await s.api('POST', 'secret/data/app/db', { data: { password: 'p1' } });
  await s.api('POST', 'secret/data/other/db', { data: { password: 'p2' } });
});
afterAll(async () => {
  await s.stop();
});

async function login(roleId: string, secretId?: string) {
  return s.api('POST', 'auth/approle/login', { role_id: roleId, ...(secretId ? { secret_id: secretId } : {}) }, { token: null });
}

describe('approle', () => {
  it('logs in and the token reads what its policy allows, nothing else', async () => {
    expect((await s.api('POST', 'auth/approle/role/web', { token_policies: 'app', token_ttl: '10m', token_max_ttl: '1h' })).status).toBe(204);
    const role = await s.api('GET', 'auth/approle/role/web');
    expect(role.body.data).toMatchObject({ token_policies: ['app'], token_ttl: 600, token_max_ttl: 3600, bind_secret_id: true });
    const roleId = (await s.api('GET', 'auth/approle/role/web/role-id')).body.data.role_id as string;
    const sid = await s.api('POST', 'auth/approle/role/web/secret-id', { metadata: '{"team":"blue"}' });
    expect(sid.body.data).toMatchObject({ secret_id_num_uses: 0 });
    const res = await login(roleId, sid.body.data.secret_id);
    expect(res.status).toBe(200);
    expect(res.body.auth).toMatchObject({ token_policies: ['app', 'default'], lease_duration: 600, renewable: true });
    expect(res.body.auth.metadata).toMatchObject({ role_name: 'web', team: 'blue' });
    const token = res.body.auth.client_token as string;
    expect((await s.api('GET', 'secret/data/app/db', undefined, { token })).body.data.data).toEqual({ password: 'p1' });
    expect((await s.api('GET', 'secret/data/other/db', undefined, { token })).status).toBe(403);
    const lookup = await s.api('POST', 'auth/approle/role/web/secret-id/lookup', { secret_id: sid.body.data.secret_id });
    expect(lookup.body.data.metadata).toEqual({ team: 'blue' });
  });

  it('renews a login token through the approle plugin only while its role exists with the same role_id', async () => {
    await s.api('POST', 'auth/approle/role/renewer', { token_policies: 'app', token_ttl: '10m', token_max_ttl: '1h' });
    const roleId = (await s.api('GET', 'auth/approle/role/renewer/role-id')).body.data.role_id as string;
    const secretId = (await s.api('POST', 'auth/approle/role/renewer/secret-id', {})).body.data.secret_id as string;
    const res = await login(roleId, secretId);
    expect(res.status).toBe(200);
    const token = res.body.auth.client_token as string;
    const accessor = res.body.auth.accessor as string;
    expect(res.body.auth.lease_duration).toBe(600);

    // The role's current token_ttl applies on renewal (the plugin answered, not only the core).
    await s.api('POST', 'auth/approle/role/renewer/token-ttl', { token_ttl: '20m' });
    const self = await s.api('POST', 'auth/token/renew-self', {}, { token });
    expect(self.status).toBe(200);
    expect(self.body.auth).toMatchObject({ client_token: token, lease_duration: 1200, token_policies: ['app', 'default'] });
    const byAccessor = await s.api('POST', 'auth/token/renew-accessor', { accessor });
    expect(byAccessor.status).toBe(200);
    expect(byAccessor.body.auth.lease_duration).toBe(1200);

    // Role gone: every renewal route refuses with a 400 naming the role; the token itself keeps working until it expires.
    expect((await s.api('DELETE', 'auth/approle/role/renewer')).status).toBe(204);
    const ttlBefore = (await s.api('POST', 'auth/token/lookup', { token })).body.data.ttl as number;
    for (const r of [
      await s.api('POST', 'auth/token/renew-self', {}, { token }),
      await s.api('POST', 'auth/token/renew', { token }),
      await s.api('POST', 'auth/token/renew-accessor', { accessor }),
    ]) {
      expect(r.status).toBe(400);
      expect(r.body.errors.join(' ')).toContain('role "renewer" does not exist during renewal');
    }
    const after = (await s.api('POST', 'auth/token/lookup', { token })).body.data;
    expect(after.ttl).toBeLessThanOrEqual(ttlBefore);
    expect((await s.api('GET', 'secret/data/app/db', undefined, { token })).status).toBe(200);

    // A new role under the same name has a new role_id: still refused.
    await s.api('POST', 'auth/approle/role/renewer', { token_policies: 'app' });
    const again = await s.api('POST', 'auth/token/renew-self', {}, { token });
    expect(again.status).toBe(400);
    expect(again.body.errors.join(' ')).toContain('role_id');
  });

  it('refuses a wrong SecretID and a missing one', async () => {
    const roleId = (await s.api('GET', 'auth/approle/role/web/role-id')).body.data.role_id as string;
    expect((await login(roleId, 'not-a-secret-id')).status).toBe(400);
    expect((await login(roleId)).status).toBe(400);
  });

  it('spends a SecretID with num_uses 5 exactly five times under 20 concurrent logins', async () => {
    await s.api('POST', 'auth/approle/role/burst', { token_policies: 'app', secret_id_num_uses: 5 });
    const roleId = (await s.api('GET', 'auth/approle/role/burst/role-id')).body.data.role_id as string;
    const secretId = (await s.api('POST', 'auth/approle/role/burst/secret-id', {})).body.data.secret_id as string;
    const results = await Promise.all(Array.from({ length: 20 }, () => login(roleId, secretId)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(5);
    expect(results.filter((r) => r.status >= 500)).toHaveLength(0);
  });

  it('refuses logins from outside the bound CIDRs, and tokens used from outside theirs', async () => {
    await s.api('POST', 'auth/approle/role/far', { token_policies: 'app', secret_id_bound_cidrs: '10.0.0.0/8' });
    const roleId = (await s.api('GET', 'auth/approle/role/far/role-id')).body.data.role_id as string;
    const secretId = (await s.api('POST', 'auth/approle/role/far/secret-id', {})).body.data.secret_id as string;
    expect((await login(roleId, secretId)).status).toBe(400);

    // token_bound_cidrs also limits where the login may come from (Vault's rule).
    await s.api('POST', 'auth/approle/role/boundtoken', { token_policies: 'app', token_bound_cidrs: '10.1.0.0/16' });
    const rid = (await s.api('GET', 'auth/approle/role/boundtoken/role-id')).body.data.role_id as string;
    const sec = (await s.api('POST', 'auth/approle/role/boundtoken/secret-id', {})).body.data.secret_id as string;
    expect((await login(rid, sec)).status).toBe(400);

    await s.api('POST', 'auth/approle/role/local', { token_policies: 'app', token_bound_cidrs: '127.0.0.0/8' });
    const lrid = (await s.api('GET', 'auth/approle/role/local/role-id')).body.data.role_id as string;
    const lsec = (await s.api('POST', 'auth/approle/role/local/secret-id', {})).body.data.secret_id as string;
    const ok = await login(lrid, lsec);
    expect(ok.status).toBe(200);
    expect((await s.api('GET', 'secret/data/app/db', undefined, { token: ok.body.auth.client_token })).status).toBe(200);

    // A token bound to a CIDR the caller is outside of is refused by the core.
    await s.api('POST', 'auth/token/roles/remote', { allowed_policies: 'app', token_bound_cidrs: '10.0.0.0/8' });
    const far = (await s.api('POST', 'auth/token/create/remote', { policies: ['app'] })).body.auth.client_token as string;
    expect((await s.api('GET', 'secret/data/app/db', undefined, { token: far })).status).toBe(403);
  });

  it('expires tokens and SecretIDs after their TTL', async () => {
    await s.api('POST', 'auth/approle/role/short', { token_policies: 'app', token_ttl: '2s', token_max_ttl: '2s', secret_id_ttl: '2s' });
    const roleId = (await s.api('GET', 'auth/approle/role/short/role-id')).body.data.role_id as string;
    const secretId = (await s.api('POST', 'auth/approle/role/short/secret-id', {})).body.data.secret_id as string;
    const res = await login(roleId, secretId);
    expect(res.body.auth.lease_duration).toBe(2);
    const token = res.body.auth.client_token as string;
    expect((await s.api('GET', 'secret/data/app/db', undefined, { token })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 3000));
    expect((await s.api('GET', 'secret/data/app/db', undefined, { token })).status).toBe(403);
    expect((await login(roleId, secretId)).status).toBe(400);
  });

  it('validates role input with 400s that name the field', async () => {
    const r = await s.api('POST', 'auth/approle/role/bad', { token_bound_cidrs: '10.0.0.0/8', token_strictly_bind_ip: true });
    expect(r.status).toBe(400);
    expect(r.body.errors.join(' ')).toMatch(/token_strictly_bind_ip|token_bound_cidrs/);
    const none = await s.api('POST', 'auth/approle/role/none', { bind_secret_id: false });
    expect(none.status).toBe(400);
    const tidy = await s.api('POST', 'auth/approle/tidy/secret-id', {});
    expect(tidy.body.warnings.join(' ')).toMatch(/tidy/i);
  });
});
