/**
 * Leases end to end: the real binary and the test lease plugin as a real
 * plugin process. Lease ids and TTL caps; the sys/leases endpoints over HTTP;
 * failing revocations retried then kept as irrevocable; token revocation
 * (and a parent's) revoking leases; a plugin reaching password policies
 * through the SystemView.
 */
import { records, startLeaseServer, type LeaseServer } from '../helpers/lease-plugin';
import { sleep, waitFor } from '../helpers/processes';

jest.setTimeout(60_000);

let s: LeaseServer;
beforeAll(async () => {
  s = await startLeaseServer({
    extraConfig: `default_lease_ttl = "1h"
max_lease_ttl = "2h"
lease_revocation {
  retry_base   = "300ms"
  max_attempts = 3
}`,
  });
  expect((await s.api('POST', 'sys/mounts/capped', { type: 'lease-test', config: { max_lease_ttl: '10m' } })).status).toBe(204);
});
afterAll(async () => {
  await s.stop('SIGKILL');
});

async function role(name: string, body: Record<string, unknown>, mount = 'lt'): Promise<void> {
  expect((await s.api('POST', `${mount}/roles/${name}`, body)).status).toBe(204);
}

async function issue(name: string, opts: { mount?: string; token?: string } = {}): Promise<{ leaseId: string; username: string; ttl: number; body: any }> {
  const r = await s.api('GET', `${opts.mount ?? 'lt'}/creds/${name}`, undefined, opts.token ? { token: opts.token } : {});
  expect(r.status).toBe(200);
  return { leaseId: r.body.lease_id, username: r.body.data.username, ttl: r.body.lease_duration, body: r.body };
}

const lookup = (leaseId: string) => s.api('POST', 'sys/leases/lookup', { lease_id: leaseId });
const revokedOnce = async (username: string) => (await records(s)).revoked[username]?.count === 1;

describe('issuing', () => {
  it('gives lease ids <mount><request path>/<random id> and the role TTL', async () => {
    await role('plain', { ttl: 300 });
    const a = await issue('plain');
    const b = await issue('plain');
    expect(a.leaseId).toMatch(/^lt\/creds\/plain\/[A-Za-z0-9]{20,}$/);
    expect(b.leaseId).not.toBe(a.leaseId);
    expect(a.ttl).toBe(300);
    expect(a.body.renewable).toBe(true);
    const l = await lookup(a.leaseId);
    expect(l.status).toBe(200);
    expect(l.body.data).toMatchObject({ id: a.leaseId, last_renewal: null, renewable: true });
    expect(l.body.data.ttl).toBeGreaterThan(295);
    expect(Date.parse(l.body.data.expire_time) - Date.parse(l.body.data.issue_time)).toBe(300_000);
  });

  it('caps TTLs by the role max, the mount max and the system max, and defaults to the system default', async () => {
    await role('defaulted', { ttl: 0 });
    expect((await issue('defaulted')).ttl).toBe(3600);
    await role('long', { ttl: '3h' });
    expect((await issue('long')).ttl).toBe(7200);
    await role('rolemax', { ttl: 300, max_ttl: 100 });
    expect((await issue('rolemax')).ttl).toBe(100);
    await role('long', { ttl: '1h' }, 'capped');
    const capped = await issue('long', { mount: 'capped' });
    expect(capped.ttl).toBe(600);
    expect(capped.leaseId).toMatch(/^capped\/creds\/long\//);
  });
});

describe('sys/leases', () => {
  it('lists lease ids below a prefix (sudo)', async () => {
    await role('listed', { ttl: 300 });
    const ids = [(await issue('listed')).leaseId, (await issue('listed')).leaseId];
    const r = await s.api('LIST', 'sys/leases/lookup/lt/creds/listed/');
    expect(r.status).toBe(200);
    expect([...r.body.data.keys].sort()).toEqual(ids.map((id) => id.split('/').pop()).sort());
    expect((await s.api('LIST', 'sys/leases/lookup/lt/creds/')).body.data.keys).toEqual(expect.arrayContaining(['listed/', 'plain/']));

    await s.api('PUT', 'sys/policies/acl/lookup-no-sudo', { policy: 'path "sys/leases/lookup/*" { capabilities = ["list", "read"] }' });
    const token = (await s.api('POST', 'auth/token/create', { policies: ['lookup-no-sudo'] })).body.auth.client_token as string;
    expect((await s.api('LIST', 'sys/leases/lookup/lt/creds/listed/', undefined, { token })).status).toBe(403);
  });

  it('renews through the plugin, with the path suffix form, capped by the max TTL from issue', async () => {
    await role('renewable', { ttl: 60, max_ttl: 120 });
    const { leaseId, username } = await issue('renewable');
    const r1 = await s.api('POST', 'sys/leases/renew', { lease_id: leaseId, increment: 30 });
    expect(r1.status).toBe(200);
    expect(r1.body).toMatchObject({ lease_id: leaseId, renewable: true, lease_duration: 30 });
    const r2 = await s.api('POST', `sys/leases/renew/${leaseId}`, { increment: '45s' });
    expect(r2.body).toMatchObject({ lease_id: leaseId, lease_duration: 45 });
    // The body wins over the path suffix.
    const r3 = await s.api('POST', 'sys/leases/renew/lt/creds/renewable/not-a-lease', { lease_id: leaseId, increment: 500 });
    expect(r3.status).toBe(200);
    expect(r3.body.lease_duration).toBeLessThanOrEqual(120);
    expect(r3.body.lease_duration).toBeGreaterThan(110);
    expect(r3.body.warnings.join(' ')).toMatch(/max_ttl/);
    expect((await records(s)).renewed[username]).toEqual({ count: 3 });
    const l = await lookup(leaseId);
    expect(l.body.data.last_renewal).not.toBeNull();

    // A token is a lease too, under its creation path, but renews only through auth/token/renew.
    expect((await s.api('POST', 'auth/token/create', { ttl: '1h' })).status).toBe(200);
    const [tokenKey] = (await s.api('LIST', 'sys/leases/lookup/auth/token/create')).body.data.keys as string[];
    const tokenLease = await s.api('POST', 'sys/leases/renew', { lease_id: `auth/token/create/${tokenKey}` });
    expect(tokenLease.status).toBe(400);
    expect(tokenLease.body.errors.join(' ')).toMatch(/use auth\/token\/renew/);
    expect((await s.api('POST', 'sys/leases/renew', {})).status).toBe(400);

    await role('fixed', { ttl: 60, renewable: false });
    const fixed = await issue('fixed');
    expect(fixed.body.renewable).toBe(false);
    const refused = await s.api('POST', 'sys/leases/renew', { lease_id: fixed.leaseId });
    expect(refused.status).toBe(400);
    expect(refused.body.errors.join(' ')).toMatch(/not renewable/);
  });

  it('revokes queued by default and at once with sync, each exactly once', async () => {
    await role('revoked', { ttl: 300 });
    const queued = await issue('revoked');
    expect((await s.api('POST', 'sys/leases/revoke', { lease_id: queued.leaseId })).status).toBe(204);
    await waitFor('queued revocation', () => revokedOnce(queued.username));
    expect((await lookup(queued.leaseId)).status).toBe(400);

    const now = await issue('revoked');
    expect((await s.api('POST', `sys/leases/revoke/${now.leaseId}`, { sync: true })).status).toBe(204);
    expect((await records(s)).revoked[now.username]).toMatchObject({ count: 1, attempts: 1 });
    expect((await lookup(now.leaseId)).status).toBe(400);
    await sleep(300);
    expect((await records(s)).revoked[queued.username]?.count).toBe(1);
  });

  it('revokes by prefix (sudo), whole path segments only', async () => {
    await role('bulk', { ttl: 300 });
    await role('bulk-other', { ttl: 300 });
    const bulk = await Promise.all(Array.from({ length: 5 }, () => issue('bulk')));
    const other = await issue('bulk-other');

    await s.api('PUT', 'sys/policies/acl/prefix-no-sudo', { policy: 'path "sys/leases/revoke-prefix/*" { capabilities = ["update"] }' });
    const token = (await s.api('POST', 'auth/token/create', { policies: ['prefix-no-sudo'] })).body.auth.client_token as string;
    expect((await s.api('POST', 'sys/leases/revoke-prefix/lt/creds/bulk', {}, { token })).status).toBe(403);

    expect((await s.api('POST', 'sys/leases/revoke-prefix/lt/creds/bulk', { sync: true })).status).toBe(204);
    const rec = await records(s);
    for (const b of bulk) expect(rec.revoked[b.username]).toMatchObject({ count: 1 });
    expect(rec.revoked[other.username]).toBeUndefined();
    expect((await lookup(other.leaseId)).status).toBe(200);
  });

  it('tidy answers with a warning and keeps the leases of live tokens', async () => {
    await role('tidy', { ttl: 300 });
    const live = await issue('tidy');
    const r = await s.api('POST', 'sys/leases/tidy', {});
    expect(r.status).toBe(200);
    expect(r.body.warnings.join(' ')).toMatch(/Tidy operation successfully started/);
    await sleep(500);
    expect((await lookup(live.leaseId)).status).toBe(200);
    expect((await records(s)).revoked[live.username]).toBeUndefined();
  });
});

describe('failing revocations', () => {
  it('are retried with backoff and succeed without becoming irrevocable', async () => {
    await role('flaky', { ttl: 1, fail_revokes: 2 });
    const { leaseId, username } = await issue('flaky');
    const rec = await waitFor('the third attempt to succeed', async () => {
      const r = (await records(s)).revoked[username];
      return r && r.count === 1 ? r : undefined;
    });
    expect(rec.attempts).toBe(3);
    expect((await lookup(leaseId)).status).toBe(400);
    const listed = await s.api('GET', 'sys/leases?type=irrevocable');
    expect(listed.body.data.leases.map((l: { lease_id: string }) => l.lease_id)).not.toContain(leaseId);
  });

  it('become irrevocable only after the retries run out, are reported per mount, and go with revoke-force', async () => {
    const mountUuid = (await s.api('GET', 'sys/mounts/lt')).body.data.uuid as string;
    await role('broken', { ttl: 1, fail_revokes: 1000 });
    const a = await issue('broken');
    const b = await issue('broken');
    // Read the report before the records: if it lists the lease, the retries must be over.
    const ids = [a.leaseId, b.leaseId];
    await waitFor('both leases irrevocable', async () => {
      const count = (await s.api('GET', 'sys/leases/count?type=irrevocable')).body.data;
      const rec = await records(s);
      for (const x of [a, b]) expect(rec.revoked[x.username]?.count ?? 0).toBe(0);
      if (count.lease_count < 2) {
        return undefined;
      }
      for (const x of [a, b]) expect(rec.revoked[x.username]?.attempts).toBe(3);
      return true;
    });
    const count = await s.api('GET', 'sys/leases/count?type=irrevocable&include_child_namespaces=true');
    expect(count.body.data).toEqual({ lease_count: 2, counts: { [mountUuid]: 2 } });
    const listed = await s.api('GET', 'sys/leases?type=irrevocable');
    expect(listed.body.data.lease_count).toBe(2);
    expect(listed.body.data.leases.map((l: { lease_id: string }) => l.lease_id).sort()).toEqual([...ids].sort());
    expect(listed.body.data.leases[0]).toMatchObject({ mount_id: mountUuid, mount_path: 'lt/', error: expect.stringMatching(/failed on purpose/) });
    const capped = await s.api('GET', 'sys/leases?type=irrevocable&limit=1');
    expect(capped.body.data.leases).toHaveLength(1);
    expect(capped.body.warnings.join(' ')).toMatch(/2 irrevocable leases exist; only 1 are listed/);
    expect((await s.api('GET', 'sys/leases?type=irrevocable&limit=none')).body.data.leases).toHaveLength(2);
    expect((await s.api('GET', 'sys/leases/count')).status).toBe(400);
    expect((await s.api('GET', 'sys/leases/count')).body.errors.join(' ')).toMatch(/type/);
    // Kept, not dropped: the lease is still there.
    expect((await lookup(a.leaseId)).status).toBe(200);
    // A few more retry periods: no more attempts (the next is a day away).
    await sleep(1500);
    expect((await records(s)).revoked[a.username]?.attempts).toBe(3);

    await s.api('PUT', 'sys/policies/acl/force-no-sudo', { policy: 'path "sys/leases/revoke-force/*" { capabilities = ["update"] }' });
    const token = (await s.api('POST', 'auth/token/create', { policies: ['force-no-sudo'] })).body.auth.client_token as string;
    expect((await s.api('POST', 'sys/leases/revoke-force/lt/creds/broken', {}, { token })).status).toBe(403);
    expect((await s.api('POST', 'sys/leases/revoke-force/lt/creds/broken', {})).status).toBe(204);
    for (const id of ids) expect((await lookup(id)).status).toBe(400);
    expect((await s.api('GET', 'sys/leases/count?type=irrevocable')).body.data.lease_count).toBe(0);
  });
});

describe('disabling and moving a mount', () => {
  it('disable revokes the leases through the still-running plugin first; a failing revocation keeps the mount', async () => {
    expect((await s.api('POST', 'sys/mounts/stuck', { type: 'lease-test' })).status).toBe(204);
    await role('never', { ttl: 300, fail_revokes: 1000 }, 'stuck');
    const held = await issue('never', { mount: 'stuck' });
    const refused = await s.api('DELETE', 'sys/mounts/stuck');
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0]).toContain('stays mounted');
    // Nothing was lost: the mount answers again and its lease is still there.
    expect((await s.api('GET', 'sys/mounts')).body.data['stuck/']).toBeDefined();
    expect((await lookup(held.leaseId)).status).toBe(200);
    expect((await s.api('GET', 'stuck/records')).status).toBe(200);
    // The operator's way out, as in Vault: force the leases away, then disable.
    expect((await s.api('POST', 'sys/leases/revoke-force/stuck/')).status).toBe(204);
    expect((await s.api('DELETE', 'sys/mounts/stuck')).status).toBe(204);

    expect((await s.api('POST', 'sys/mounts/brief', { type: 'lease-test' })).status).toBe(204);
    await role('plain', { ttl: 300 }, 'brief');
    const a = await issue('plain', { mount: 'brief' });
    expect((await s.api('DELETE', 'sys/mounts/brief')).status).toBe(204);
    // Revoked at once, not queued against a plugin that is gone (it would stay pending, then irrevocable).
    expect((await lookup(a.leaseId)).status).toBe(400);
  });

  it('sys/remount revokes the mount\'s leases first, as Vault does', async () => {
    expect((await s.api('POST', 'sys/mounts/mover', { type: 'lease-test' })).status).toBe(204);
    await role('plain', { ttl: 300, record: true }, 'mover');
    const a = await issue('plain', { mount: 'mover' });
    expect((await s.api('POST', 'sys/remount', { from: 'mover', to: 'moved' })).status).toBe(200);
    expect((await lookup(a.leaseId)).status).toBe(400);
    expect((await records(s, 'moved')).revoked[a.username]?.count).toBe(1);
  });
});

describe('token revocation', () => {
  beforeAll(async () => {
    await s.api('PUT', 'sys/policies/acl/lease-user', {
      policy: 'path "lt/creds/*" { capabilities = ["read"] }\npath "auth/token/create" { capabilities = ["update"] }',
    });
    await role('bytoken', { ttl: 300 });
  });

  it('revoking a token revokes its leases and no others', async () => {
    const token = (await s.api('POST', 'auth/token/create', { policies: ['lease-user'] })).body.auth.client_token as string;
    const mine = [await issue('bytoken', { token }), await issue('bytoken', { token })];
    const other = await issue('bytoken');
    expect((await s.api('POST', 'auth/token/revoke', { token })).status).toBe(204);
    await waitFor('the token leases revoked', async () => (await Promise.all(mine.map((m) => revokedOnce(m.username)))).every(Boolean));
    for (const m of mine) expect((await lookup(m.leaseId)).status).toBe(400);
    expect((await lookup(other.leaseId)).status).toBe(200);
  });

  it("revoking a parent token revokes its children's leases", async () => {
    const parent = (await s.api('POST', 'auth/token/create', { policies: ['lease-user'] })).body.auth.client_token as string;
    const child = (await s.api('POST', 'auth/token/create', { policies: ['lease-user'] }, { token: parent })).body.auth.client_token as string;
    const grandchild = (await s.api('POST', 'auth/token/create', { policies: ['lease-user'] }, { token: child })).body.auth.client_token as string;
    const leases = [await issue('bytoken', { token: parent }), await issue('bytoken', { token: child }), await issue('bytoken', { token: grandchild })];
    expect((await s.api('POST', 'auth/token/revoke', { token: parent })).status).toBe(204);
    await waitFor('every lease of the token tree revoked', async () => (await Promise.all(leases.map((l) => revokedOnce(l.username)))).every(Boolean));
    expect((await s.api('POST', 'auth/token/lookup', { token: grandchild })).status).toBeGreaterThanOrEqual(400);
  });
});

describe('password policies through the SystemView', () => {
  it('a plugin generates from a stored policy; an unknown name is a 400 naming it', async () => {
    await s.api('PUT', 'sys/policies/password/hexish', { policy: 'length = 12\nrule "charset" {\n  charset = "abcdef"\n  min-chars = 2\n}\nrule "charset" {\n  charset = "0123456789"\n  min-chars = 2\n}\n' });
    for (let i = 0; i < 5; i++) {
      const r = await s.api('GET', 'lt/password/hexish');
      expect(r.status).toBe(200);
      const pw = r.body.data.password as string;
      expect(pw).toMatch(/^[a-f0-9]{12}$/);
      expect(pw.replace(/[^a-f]/g, '').length).toBeGreaterThanOrEqual(2);
      expect(pw.replace(/[^0-9]/g, '').length).toBeGreaterThanOrEqual(2);
    }
    const missing = await s.api('GET', 'lt/password/nope');
    expect(missing.status).toBe(400);
    expect(missing.body.errors.join(' ')).toMatch(/password policy "nope" does not exist/);
  });
});
