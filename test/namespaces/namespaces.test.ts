/**
 * Namespaces as a tenancy boundary, through the real binary and real plugin
 * processes: the sys/namespaces API, isolation both ways, parent-to-child
 * access through a parent policy, child-to-parent and sibling refusal,
 * deletion (refused with children, a leaf leaves nothing in storage), and a
 * SIGKILL and restart keeping every namespace and its contents.
 */
import { join } from 'node:path';
import { levelStorageKeys } from '../helpers/level-keys';
import { restartUnsealed, startUnsealedLevelServer, type RunningServer } from '../helpers/server';

jest.setTimeout(120_000);

let s: RunningServer & { configFile: string };

async function restart(): Promise<void> {
  s = await restartUnsealed(s);
}

const ns = (path: string) => ({ headers: { 'X-Service-Namespace': path } });
const as = (token: string, namespace?: string) => ({ token, ...(namespace ? ns(namespace) : {}) });

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const storageKeys = (dir: string) => levelStorageKeys(join(dir, 'data'));

beforeAll(async () => {
  s = await startUnsealedLevelServer();
});
afterAll(async () => {
  await s.stop('SIGKILL');
});

describe('sys/namespaces', () => {
  it('creates, reads, patches and lists namespaces, nested by header, by path or split', async () => {
    const c = await s.api('POST', 'sys/namespaces/team-a', { custom_metadata: { owner: 'alice' } });
    expect(c.status).toBe(200);
    expect(c.body.data).toMatchObject({ path: 'team-a/', custom_metadata: { owner: 'alice' } });
    expect(c.body.data.id).toMatch(/^[A-Za-z0-9]{5}$/);

    // Nested: by header, by path, and split across both are the same namespace.
    expect((await s.api('PUT', 'sys/namespaces/child1', {}, ns('team-a'))).body.data.path).toBe('team-a/child1/');
    expect((await s.api('PUT', 'team-a/sys/namespaces/child2', {})).body.data.path).toBe('team-a/child2/');
    const read = await s.api('GET', 'child1/sys/namespaces/../../sys/namespaces/child1', undefined, ns('team-a'));
    expect([400, 404]).toContain(read.status); // `..` never walks up
    expect((await s.api('GET', 'sys/namespaces/child1', undefined, ns('team-a'))).body.data.path).toBe('team-a/child1/');

    const p = await s.api('PATCH', 'sys/namespaces/team-a', { custom_metadata: { owner: null, tier: 'gold' } }, { headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(p.status).toBe(200);
    expect(p.body.data.custom_metadata).toEqual({ tier: 'gold' });

    const l = await s.api('GET', 'sys/namespaces?list=true', undefined, ns('team-a'));
    expect(l.body.data.keys).toEqual(['child1/', 'child2/']);
    expect(l.body.data.key_info['child1/']).toMatchObject({ path: 'team-a/child1/' });
    const top = await s.api('GET', 'sys/namespaces?list=true');
    expect(top.body.data.keys).toEqual(['team-a/']);
  });

  it('keeps the server-wide sys paths (seal, plugins, audit, keys) in the root namespace only', async () => {
    for (const [method, path] of [['PUT', 'sys/seal'], ['POST', 'sys/rotate'], ['GET', 'sys/key-status'], ['GET', 'sys/plugins/catalog'], ['GET', 'sys/audit']] as const) {
      const r = await s.api(method, path, method === 'GET' ? undefined : {}, ns('team-a'));
      expect([400, 404, 405]).toContain(r.status);
    }
    expect((await s.api('GET', 'sys/seal-status', undefined, { token: null })).body.sealed).toBe(false);
    expect((await s.api('GET', 'sys/key-status')).status).toBe(200);
  });

  it('refuses bad names with a 400 naming the path', async () => {
    for (const bad of ['root', 'sys', 'auth', 'cubbyhole', 'identity', 'audit', 'a%20b', 'a@b']) {
      const r = await s.api('POST', `sys/namespaces/${bad}`, {});
      expect(r.status).toBe(400);
      expect(r.body.errors.join(' ')).toMatch(/path/);
    }
    const orphan = await s.api('POST', 'sys/namespaces/x', {}, ns('no-such-parent'));
    expect(orphan.status).toBe(404);
  });
});

describe('isolation', () => {
  let tokenA = '';
  let tokenB = '';
  beforeAll(async () => {
    for (const t of ['tenant-a', 'tenant-b']) {
      expect((await s.api('POST', `sys/namespaces/${t}`, {})).status).toBe(200);
      expect((await s.api('POST', 'sys/mounts/kv', { type: 'kv', options: { version: '2' } }, ns(t))).status).toBe(204);
      await s.api('PUT', 'sys/policies/acl/app', { policy: 'path "kv/data/*" { capabilities = ["create", "read", "update"] }' }, ns(t));
    }
    tokenA = (await s.api('POST', 'auth/token/create', { policies: ['app'] }, ns('tenant-a'))).body.auth.client_token;
    tokenB = (await s.api('POST', 'auth/token/create', { policies: ['app'] }, ns('tenant-b'))).body.auth.client_token;
  });

  it('gives each namespace its own mounts, policies and tokens', async () => {
    expect(tokenA.endsWith(`.${(await s.api('GET', 'sys/namespaces/tenant-a')).body.data.id}`)).toBe(true);
    expect((await s.api('POST', 'kv/data/x', { data: { v: 'a' } }, as(tokenA, 'tenant-a'))).status).toBe(200);
    expect((await s.api('POST', 'kv/data/x', { data: { v: 'b' } }, as(tokenB, 'tenant-b'))).status).toBe(200);
    expect((await s.api('GET', 'kv/data/x', undefined, as(tokenA, 'tenant-a'))).body.data.data).toEqual({ v: 'a' });
    expect((await s.api('GET', 'tenant-b/kv/data/x', undefined, as(tokenB))).body.data.data).toEqual({ v: 'b' });

    // The root namespace has no kv/ and no policy "app"; a new namespace starts with no secrets engine but its cubbyhole.
    expect((await s.api('GET', 'sys/mounts')).body.data['kv/']).toBeUndefined();
    const mounts = (await s.api('GET', 'sys/mounts', undefined, ns('tenant-a'))).body.data;
    expect(Object.keys(mounts).sort()).toEqual(['cubbyhole/', 'kv/', 'sys/']);
    expect(Object.keys((await s.api('GET', 'sys/auth', undefined, ns('tenant-a'))).body.data)).toEqual(['token/']);
    expect((await s.api('GET', 'sys/policies/acl/app')).status).toBe(404);
    const accessorsA = (await s.api('GET', 'auth/token/accessors?list=true', undefined, ns('tenant-a'))).body.data.keys as string[];
    const rootAccessors = (await s.api('GET', 'auth/token/accessors?list=true')).body.data.keys as string[];
    expect(accessorsA.length).toBeGreaterThan(0);
    expect(accessorsA.some((a) => rootAccessors.includes(a))).toBe(false);
  });

  it('never lets a token reach a sibling or a parent namespace', async () => {
    expect((await s.api('GET', 'kv/data/x', undefined, as(tokenA, 'tenant-b'))).status).toBe(403);
    expect((await s.api('GET', 'tenant-b/kv/data/x', undefined, as(tokenA))).status).toBe(403);
    expect((await s.api('GET', 'tenant-b/kv/data/x', undefined, as(tokenA, 'tenant-a'))).status).toBe(403);
    expect((await s.api('GET', 'sys/mounts', undefined, as(tokenA))).status).toBe(403);
    expect((await s.api('GET', 'auth/token/lookup-self', undefined, as(tokenA))).status).toBe(403);
    expect((await s.api('GET', 'auth/token/lookup-self', undefined, as(tokenA, 'tenant-a'))).status).toBe(200);
  });

  it('lets a parent token reach a child through its own namespace policy, relative to its namespace', async () => {
    await s.api('POST', 'sys/namespaces/inner', {}, ns('tenant-a'));
    await s.api('POST', 'sys/mounts/kv', { type: 'kv', options: { version: '2' } }, ns('tenant-a/inner'));
    await s.api('POST', 'kv/data/deep', { data: { v: 'deep' } }, ns('tenant-a/inner'));
    await s.api('PUT', 'sys/policies/acl/reach', { policy: 'path "inner/kv/data/*" { capabilities = ["read"] }' }, ns('tenant-a'));
    const parent = (await s.api('POST', 'auth/token/create', { policies: ['reach'] }, ns('tenant-a'))).body.auth.client_token;
    expect((await s.api('GET', 'inner/kv/data/deep', undefined, as(parent, 'tenant-a'))).body.data.data).toEqual({ v: 'deep' });
    expect((await s.api('GET', 'kv/data/deep', undefined, as(parent, 'tenant-a/inner'))).body.data.data).toEqual({ v: 'deep' });
    // A policy written in the child grants nothing to the parent's token.
    const child = (await s.api('POST', 'auth/token/create', { policies: ['default'] }, ns('tenant-a/inner'))).body.auth.client_token;
    expect((await s.api('GET', 'kv/data/x', undefined, as(child, 'tenant-a'))).status).toBe(403);
  });

  it('issues namespace tokens from an auth method mounted in the namespace (approle)', async () => {
    expect((await s.api('POST', 'sys/auth/approle', { type: 'approle' }, ns('tenant-b'))).status).toBe(204);
    await s.api('POST', 'auth/approle/role/svc', { token_policies: ['app'] }, ns('tenant-b'));
    const roleId = (await s.api('GET', 'auth/approle/role/svc/role-id', undefined, ns('tenant-b'))).body.data.role_id;
    const secretId = (await s.api('POST', 'auth/approle/role/svc/secret-id', {}, ns('tenant-b'))).body.data.secret_id;
    const login = await s.api('POST', 'auth/approle/login', { role_id: roleId, secret_id: secretId }, { token: null, ...ns('tenant-b') });
    expect(login.status).toBe(200);
    const t = login.body.auth.client_token as string;
    const idB = (await s.api('GET', 'sys/namespaces/tenant-b')).body.data.id;
    expect(t.endsWith(`.${idB}`)).toBe(true);
    expect((await s.api('GET', 'kv/data/x', undefined, as(t, 'tenant-b'))).body.data.data).toEqual({ v: 'b' });
    expect((await s.api('GET', 'kv/data/x', undefined, as(t, 'tenant-a'))).status).toBe(403);
    // The root namespace's approle path does not exist.
    expect((await s.api('POST', 'auth/approle/login', { role_id: roleId, secret_id: secretId }, { token: null })).status).not.toBe(200);
  });
});

describe('deletion', () => {
  it('is refused while child namespaces exist', async () => {
    const r = await s.api('DELETE', 'sys/namespaces/team-a');
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/child namespaces/);
  });

  it('removes a leaf and everything in it, leaving nothing in storage', async () => {
    // Wait for earlier background work (plugin starts) to settle, then take the key set.
    await s.api('POST', 'sys/namespaces/leaf', {});
    await s.api('POST', 'sys/mounts/kv', { type: 'kv', options: { version: '2' } }, ns('leaf'));
    await s.api('POST', 'kv/data/a', { data: { v: 'secret-of-leaf' } }, ns('leaf'));
    await s.api('PUT', 'sys/policies/acl/p', { policy: 'path "kv/*" { capabilities = ["read"] }' }, ns('leaf'));
    await s.api('PUT', 'sys/policies/password/pp', { policy: 'length = 20\nrule "charset" { charset = "abcdefghij" }' }, ns('leaf'));
    await s.api('POST', 'auth/token/roles/r1', { allowed_policies: ['p'] }, ns('leaf'));
    const leafToken = (await s.api('POST', 'auth/token/create', { policies: ['p'] }, ns('leaf'))).body.auth.client_token;
    const leafId = (await s.api('GET', 'sys/namespaces/leaf')).body.data.id as string;

    const del = await s.api('DELETE', 'sys/namespaces/leaf');
    expect(del.status).toBe(200);
    const gone = await until(() => s.api('GET', 'sys/namespaces/leaf'), (r) => r.status === 404);
    expect(gone.status).toBe(404);
    expect((await s.api('GET', 'kv/data/a', undefined, ns('leaf'))).status).toBe(404);
    expect((await s.api('GET', 'auth/token/lookup-self', undefined, as(leafToken))).status).toBe(403);

    await s.stop('SIGTERM');
    const keys = await storageKeys(s.dataDir);
    expect(keys.filter((k) => k.includes(leafId))).toEqual([]);
    await restart();
  });

  it('keeps every namespace and its contents across a SIGKILL and restart', async () => {
    await s.stop('SIGKILL');
    await restart();
    const kv = await until(() => s.api('GET', 'kv/data/x', undefined, ns('tenant-a')), (r) => r.status === 200);
    expect(kv.body.data.data).toEqual({ v: 'a' });
    expect((await s.api('GET', 'kv/data/deep', undefined, ns('tenant-a/inner'))).body.data.data).toEqual({ v: 'deep' });
    expect((await s.api('GET', 'sys/namespaces?list=true')).body.data.keys).toEqual(['team-a/', 'tenant-a/', 'tenant-b/']);
  });
});
