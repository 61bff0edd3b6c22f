/**
 * Leases, tokens and audit inside namespaces, through the real binary and the
 * test lease plugin as a real plugin process: lease ids carry the namespace,
 * lookup/list/revoke-prefix stay inside the request's namespace (a parent
 * reaches its children, never the other way), revoking a namespace token
 * revokes its children, and audit entries name the namespace.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { records, startLeaseServer, type LeaseServer } from '../helpers/lease-plugin';
import { scratchDir } from '../helpers/server';
import { waitFor } from '../helpers/processes';

jest.setTimeout(90_000);

let s: LeaseServer;
const ids: Record<string, string> = {};
const ns = (path: string) => ({ headers: { 'X-Service-Namespace': path } });

async function issue(namespace: string | null): Promise<{ leaseId: string; username: string }> {
  const r = await s.api('GET', 'lt/creds/r', undefined, namespace ? ns(namespace) : {});
  expect(r.status).toBe(200);
  return { leaseId: r.body.lease_id, username: r.body.data.username };
}

beforeAll(async () => {
  s = await startLeaseServer({ extraConfig: 'lease_revocation {\n  retry_base = "100ms"\n  max_attempts = 2\n}' });
  for (const [parent, name] of [[null, 'org'], ['org', 'team']] as const) {
    const c = await s.api('POST', `sys/namespaces/${name}`, {}, parent ? ns(parent) : {});
    expect(c.status).toBe(200);
    ids[parent ? `${parent}/${name}` : name] = c.body.data.id;
  }
  for (const where of [null, 'org', 'org/team']) {
    if (where) expect((await s.api('POST', 'sys/mounts/lt', { type: 'lease-test' }, ns(where))).status).toBe(204);
    expect((await s.api('POST', 'lt/roles/r', { ttl: 600, record: true }, where ? ns(where) : {})).status).toBe(204);
  }
});
afterAll(async () => {
  await s.stop('SIGKILL');
});

describe('leases in namespaces', () => {
  it('carry the namespace id and stay inside their namespace', async () => {
    const root = await issue(null);
    const org = await issue('org');
    const team = await issue('org/team');
    expect(root.leaseId).toMatch(/^lt\/creds\/r\/[A-Za-z0-9]+$/);
    expect(org.leaseId.endsWith(`.${ids.org}`)).toBe(true);
    expect(team.leaseId.endsWith(`.${ids['org/team']}`)).toBe(true);

    const lookup = (id: string, where: string | null) => s.api('POST', 'sys/leases/lookup', { lease_id: id }, where ? ns(where) : {});
    expect((await lookup(org.leaseId, 'org')).status).toBe(200);
    expect((await lookup(team.leaseId, 'org')).status).toBe(200); // a parent sees its children's leases
    expect((await lookup(root.leaseId, 'org')).status).toBe(400); // never its parent's
    expect((await lookup(org.leaseId, 'org/team')).status).toBe(400);
    expect((await lookup(org.leaseId, null)).status).toBe(200);
    // Revoking or renewing another namespace's lease by id is refused the same way.
    expect((await s.api('POST', 'sys/leases/revoke', { lease_id: root.leaseId }, ns('org'))).status).toBe(400);
    expect((await s.api('POST', 'sys/leases/renew', { lease_id: root.leaseId }, ns('org'))).status).toBe(400);

    const listed = await s.api('GET', 'sys/leases/lookup/lt/creds/r/?list=true', undefined, ns('org'));
    expect(listed.body.data.keys).toEqual([org.leaseId.split('/').pop()]);
  });

  it('revoke-prefix inside a namespace never touches another', async () => {
    const root = await issue(null);
    const org = await issue('org');
    const team = await issue('org/team');
    expect((await s.api('POST', 'sys/leases/revoke-prefix/lt/', { sync: true }, ns('org'))).status).toBe(204);
    expect((await s.api('POST', 'sys/leases/lookup', { lease_id: org.leaseId })).status).toBe(400);
    expect((await s.api('POST', 'sys/leases/lookup', { lease_id: root.leaseId })).status).toBe(200);
    expect((await s.api('POST', 'sys/leases/lookup', { lease_id: team.leaseId })).status).toBe(200);
    const rec = await s.api('GET', 'lt/records', undefined, ns('org'));
    expect(rec.body.data.revoked[org.username]?.count).toBe(1);
    expect((await records(s)).revoked[root.username]).toBeUndefined();
  });

  it('counts irrevocable leases per namespace, with include_child_namespaces', async () => {
    await s.api('POST', 'lt/roles/stuck', { ttl: 600, fail_revokes: 100 }, ns('org/team'));
    const stuck = (await s.api('GET', 'lt/creds/stuck', undefined, ns('org/team'))).body.lease_id as string;
    // A failed sync revoke leaves the lease; revoke-force would remove it. Mark it irrevocable by failing revokes.
    await s.api('POST', 'sys/leases/revoke', { lease_id: stuck }, ns('org/team'));
    const count = (where: string, children: boolean) => s.api('GET', `sys/leases/count?type=irrevocable&include_child_namespaces=${children}`, undefined, ns(where));
    await waitFor('the irrevocable lease', async () => (await count('org/team', false)).body.data?.lease_count === 1, 30_000);
    expect((await count('org', false)).body.data.lease_count).toBe(0);
    expect((await count('org', true)).body.data.lease_count).toBe(1);
  });
});

describe('tokens, audit and metrics in namespaces', () => {
  it('labels lease and token metrics with the namespace', async () => {
    await issue('org/team');
    const text = await (await fetch(`${s.url}/v1/sys/metrics?format=prometheus`, { headers: { 'X-Service-Token': s.rootToken } })).text();
    expect(text).toMatch(/strongroom_leases\{[^}]*mount="lt\/"[^}]*namespace="org\/team\/"[^}]*\} [1-9]/);
    expect(text).toMatch(/strongroom_lease_revocations_total\{[^}]*namespace="org\/"[^}]*\} [1-9]/);
    expect(text).toMatch(/strongroom_tokens\{[^}]*namespace="root"[^}]*\} [1-9]/);
  });

  it('revoking a namespace token revokes its children', async () => {
    await s.api('PUT', 'sys/policies/acl/mint', { policy: 'path "auth/token/create" { capabilities = ["update"] }' }, ns('org'));
    const parent = (await s.api('POST', 'auth/token/create', { policies: ['mint'] }, ns('org'))).body.auth.client_token as string;
    const child = (await s.api('POST', 'auth/token/create', { policies: ['mint'] }, { token: parent, ...ns('org') })).body.auth.client_token as string;
    expect(child.endsWith(`.${ids.org}`)).toBe(true);
    expect((await s.api('GET', 'auth/token/lookup-self', undefined, { token: child, ...ns('org') })).status).toBe(200);
    expect((await s.api('POST', 'auth/token/revoke', { token: parent }, ns('org'))).status).toBe(204);
    expect((await s.api('GET', 'auth/token/lookup-self', undefined, { token: child, ...ns('org') })).status).toBe(403);
  });

  it("a token's lease carries its namespace, stays inside it, and when it falls due revokes the token and the secret leases it holds", async () => {
    await s.api('PUT', 'sys/policies/acl/creds', { policy: 'path "lt/creds/r" { capabilities = ["read"] }' }, ns('org'));
    const token = (await s.api('POST', 'auth/token/create', { policies: ['creds'], ttl: '3s' }, ns('org'))).body.auth.client_token as string;
    const held = await s.api('GET', 'lt/creds/r', undefined, { token, ...ns('org') });
    expect(held.status).toBe(200);
    // Listed and looked up as a lease of its namespace (and of the parent), never of a child or a sibling.
    const keys = (await s.api('LIST', 'sys/leases/lookup/auth/token/create', undefined, ns('org'))).body.data.keys as string[];
    const mine = keys.filter((k) => k.endsWith(`.${ids.org}`));
    expect(mine.length).toBeGreaterThanOrEqual(1);
    const leaseIds = mine.map((k) => `auth/token/create/${k}`);
    const looked = await Promise.all(leaseIds.map(async (id) => (await s.api('POST', 'sys/leases/lookup', { lease_id: id }, ns('org'))).body.data));
    const lease = looked.find((d) => d.ttl <= 3)!;
    expect(lease).toBeDefined();
    expect((await s.api('POST', 'sys/leases/lookup', { lease_id: lease.id })).status).toBe(200);
    expect((await s.api('POST', 'sys/leases/lookup', { lease_id: lease.id }, ns('org/team'))).status).toBe(400);
    expect((await s.api('POST', 'sys/leases/revoke', { lease_id: lease.id }, ns('org/team'))).status).toBe(400);
    // Due: the expiration manager revokes the token, and with it the lease it held.
    await waitFor('the token lease to fall due', async () => (await s.api('POST', 'sys/leases/lookup', { lease_id: lease.id }, ns('org'))).status === 400, 20_000);
    expect((await s.api('GET', 'auth/token/lookup-self', undefined, { token, ...ns('org') })).status).toBe(403);
    await waitFor('the held secret lease to go', async () => (await s.api('POST', 'sys/leases/lookup', { lease_id: held.body.lease_id }, ns('org'))).status === 400, 20_000);
    const rec = await s.api('GET', 'lt/records', undefined, ns('org'));
    expect(rec.body.data.revoked[held.body.data.username]?.count).toBe(1);
  });

  it('writes the namespace id and path into audit entries', async () => {
    const file = join(scratchDir('sr-ns-audit-'), 'audit.log');
    expect((await s.api('PUT', 'sys/audit/file', { type: 'file', options: { file_path: file } })).status).toBe(204);
    await s.api('GET', 'lt/roles/r', undefined, ns('org/team'));
    const entries = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; request: { path: string; namespace?: { id: string; path: string } } });
    const mine = entries.filter((e) => e.request.path === 'lt/roles/r');
    expect(mine.length).toBeGreaterThanOrEqual(2);
    for (const e of mine) expect(e.request.namespace).toEqual({ id: ids['org/team'], path: 'org/team/' });
  });
});
