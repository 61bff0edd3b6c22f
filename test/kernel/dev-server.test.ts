/**
 * The kernel end to end through the real binary and the real kv plugin
 * process: envelope, tokens, ACLs decided by the engine's existence check,
 * listing rules, help, errors.
 */
import http from 'node:http';
import { startDevServer, type RunningServer } from '../helpers/server';

let s: RunningServer;
beforeAll(async () => {
  s = await startDevServer();
});
afterAll(async () => {
  await s.stop();
});

describe('dev server', () => {
  it('starts initialized and unsealed with kv v2 at secret/', async () => {
    const h = await s.api('GET', 'sys/health', undefined, { token: null });
    expect(h.status).toBe(200);
    expect(h.body).toMatchObject({ initialized: true, sealed: false, standby: false });
    const m = await s.api('GET', 'sys/internal/ui/mounts/secret/data/x');
    expect(m.body.data).toMatchObject({ type: 'kv', options: { version: '2' }, path: 'secret/' });
  });

  it('answers the Vault envelope and 204 for writes without data', async () => {
    const w = await s.api('POST', 'secret/data/app', { data: { password: 'hunter2' } });
    expect(w.status).toBe(200);
    expect(w.body).toMatchObject({ lease_id: '', renewable: false, lease_duration: 0, wrap_info: null, data: { version: 1 } });
    const r = await s.api('GET', 'secret/data/app');
    expect(r.body.data.data).toEqual({ password: 'hunter2' });
    const p = await s.api('PUT', 'sys/policies/acl/empty', { policy: 'path "x" { capabilities = ["read"] }' });
    expect(p.status).toBe(204);
    expect(p.text).toBe('');
  });

  it('treats PUT and POST alike and lists with list=true, 404 when empty', async () => {
    await s.api('PUT', 'secret/data/dir/a', { data: { v: '1' } });
    const l = await s.api('GET', 'secret/metadata/dir/?list=true');
    expect(l.body.data.keys).toEqual(['a']);
    const l1 = await s.api('GET', 'secret/metadata/dir?list=1');
    expect(l1.body.data.keys).toEqual(['a']);
    const empty = await s.api('GET', 'secret/metadata/nothing/?list=true');
    expect(empty.status).toBe(404);
    expect(empty.body).toEqual({ errors: [] });
  });

  it('accepts the raw LIST verb as curl, hvac and node-vault send it', async () => {
    await s.api('PUT', 'secret/data/listverb/a', { data: { v: '1' } });
    const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(`${s.url}/v1/secret/metadata/listverb/`, { method: 'LIST', headers: { 'X-Service-Token': s.rootToken } }, (r) => {
        let b = '';
        r.on('data', (c: Buffer) => (b += c.toString()));
        r.on('end', () => resolve({ status: r.statusCode ?? 0, body: b }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).data.keys).toEqual(['a']);
  });

  it('refuses missing and wrong tokens with 403, and an unknown route with 404', async () => {
    await s.api('POST', 'secret/data/app', { data: { password: 'hunter2' } });
    expect((await s.api('GET', 'secret/data/app', undefined, { token: null })).status).toBe(403);
    expect((await s.api('GET', 'secret/data/app', undefined, { token: 'srs.wrong' })).status).toBe(403);
    const bearer = await fetch(`${s.url}/v1/secret/data/app`, { headers: { Authorization: `Bearer ${s.rootToken}` } });
    expect(bearer.status).toBe(200);
    const alias = await fetch(`${s.url}/v1/secret/data/app`, { headers: { 'X-Vault-Token': s.rootToken } });
    expect(alias.status).toBe(200);
    const none = await s.api('GET', 'nothing/here');
    expect(none.status).toBe(404);
    expect(none.body.errors[0]).toMatch(/no handler for route/);
  });

  it('decides create vs update with the engine existence check', async () => {
    await s.api('PUT', 'sys/policies/acl/creator', { policy: 'path "secret/data/c/*" { capabilities = ["create"] }' });
    const t = (await s.api('POST', 'auth/token/create', { policies: ['creator'] })).body.auth.client_token as string;
    const created = await s.api('POST', 'secret/data/c/new', { data: { a: 1 } }, { token: t });
    expect(created.status).toBe(200);
    const updated = await s.api('POST', 'secret/data/c/new', { data: { a: 2 } }, { token: t });
    expect(updated.status).toBe(403);
  });

  it('a policy with only update cannot create', async () => {
    await s.api('PUT', 'sys/policies/acl/updater', { policy: 'path "secret/data/u/*" { capabilities = ["update"] }' });
    const t = (await s.api('POST', 'auth/token/create', { policies: ['updater'] })).body.auth.client_token as string;
    expect((await s.api('POST', 'secret/data/u/existing', { data: { a: 1 } })).status).toBe(200);
    expect((await s.api('POST', 'secret/data/u/existing', { data: { a: 2 } }, { token: t })).status).toBe(200);
    expect((await s.api('POST', 'secret/data/u/new', { data: { a: 1 } }, { token: t })).status).toBe(403);
    expect((await s.api('GET', 'secret/data/u/new')).status).toBe(404);
  });

  // Issue 20: with create and update both granted (and no audit device) the write goes to the
  // plugin in one round trip and the plugin's own existence check picks the handler. Transit's
  // upsert shows which one ran: encrypt creates a missing key only as a create.
  it('a write allowed as create and update alike still reaches the engine as the right operation', async () => {
    expect((await s.api('POST', 'sys/mounts/transit-ex', { type: 'transit' })).status).toBe(204);
    await s.api('PUT', 'sys/policies/acl/enc-both', { policy: 'path "transit-ex/encrypt/*" { capabilities = ["create", "update"] }' });
    await s.api('PUT', 'sys/policies/acl/enc-update', { policy: 'path "transit-ex/encrypt/*" { capabilities = ["update"] }' });
    const both = (await s.api('POST', 'auth/token/create', { policies: ['enc-both'] })).body.auth.client_token as string;
    const updateOnly = (await s.api('POST', 'auth/token/create', { policies: ['enc-update'] })).body.auth.client_token as string;
    const plaintext = Buffer.from('hello').toString('base64');

    const created = await s.api('POST', 'transit-ex/encrypt/upserted', { plaintext }, { token: both });
    expect(created.status).toBe(200);
    expect(created.body.data.ciphertext).toMatch(/^[a-z]+:v1:/);
    expect((await s.api('GET', 'transit-ex/keys/upserted')).status).toBe(200);
    expect((await s.api('POST', 'transit-ex/encrypt/upserted', { plaintext }, { token: both })).status).toBe(200);
    expect((await s.api('POST', 'transit-ex/encrypt/upserted', { plaintext }, { token: updateOnly })).status).toBe(200);

    expect((await s.api('POST', 'transit-ex/encrypt/missing', { plaintext }, { token: updateOnly })).status).toBe(403);
    expect((await s.api('GET', 'transit-ex/keys/missing')).status).toBe(404);
  });

  it('enforces ACL globs, deny and sudo', async () => {
    await s.api('PUT', 'sys/policies/acl/reader', {
      policy: 'path "secret/data/app" { capabilities = ["read"] }\npath "secret/data/+/deny" { capabilities = ["deny"] }\npath "secret/data/*" { capabilities = ["read", "list"] }',
    });
    const t = (await s.api('POST', 'auth/token/create', { policies: ['reader'] })).body.auth.client_token as string;
    expect((await s.api('GET', 'secret/data/app', undefined, { token: t })).status).toBe(200);
    expect((await s.api('POST', 'secret/data/app', { data: {} }, { token: t })).status).toBe(403);
    expect((await s.api('GET', 'secret/data/x/deny', undefined, { token: t })).status).toBe(403);
    expect((await s.api('GET', 'sys/audit', undefined, { token: t })).status).toBe(403);
    const caps = await s.api('POST', 'sys/capabilities-self', { paths: ['secret/data/app', 'secret/data/x/deny'] }, { token: t });
    expect(caps.body.data['secret/data/app']).toEqual(['read']);
    expect(caps.body.data['secret/data/x/deny']).toEqual(['deny']);
  });

  it('manages tokens: lookup-self, child revocation, num_uses, accessors', async () => {
    // The default policy cannot create tokens (as in Vault): the parent needs a policy for it.
    await s.api('PUT', 'sys/policies/acl/tokenmaker', { policy: 'path "auth/token/create" { capabilities = ["update"] }' });
    const parent = (await s.api('POST', 'auth/token/create', { policies: ['default', 'tokenmaker'], ttl: '1h' })).body.auth;
    expect(parent.lease_duration).toBe(3600);
    const child = (await s.api('POST', 'auth/token/create', { policies: ['default'] }, { token: parent.client_token })).body.auth;
    const self = await s.api('GET', 'auth/token/lookup-self', undefined, { token: child.client_token });
    expect(self.body.data).toMatchObject({ policies: ['default'], accessor: child.accessor });
    expect((await s.api('POST', 'auth/token/revoke', { token: parent.client_token })).status).toBe(204);
    expect((await s.api('GET', 'auth/token/lookup-self', undefined, { token: child.client_token })).status).toBe(403);

    const limited = (await s.api('POST', 'auth/token/create', { policies: ['default'], num_uses: 2 })).body.auth.client_token;
    expect((await s.api('GET', 'auth/token/lookup-self', undefined, { token: limited })).status).toBe(200);
    expect((await s.api('GET', 'auth/token/lookup-self', undefined, { token: limited })).status).toBe(200);
    expect((await s.api('GET', 'auth/token/lookup-self', undefined, { token: limited })).status).toBe(403);

    const byAcc = (await s.api('POST', 'auth/token/create', { policies: ['default'] })).body.auth;
    expect((await s.api('POST', 'auth/token/lookup-accessor', { accessor: byAcc.accessor })).body.data.accessor).toBe(byAcc.accessor);
    await s.api('POST', 'auth/token/revoke-accessor', { accessor: byAcc.accessor });
    expect((await s.api('GET', 'auth/token/lookup-self', undefined, { token: byAcc.client_token })).status).toBe(403);
  });

  it('resolves the namespace from header and path: root explicit, aliases, unknown namespaces', async () => {
    await s.api('POST', 'secret/data/ns-probe', { data: { v: 'root-ns' } });
    // The root namespace given explicitly is the same as none.
    for (const [name, value] of [['X-Service-Namespace', 'root'], ['X-Vault-Namespace', 'root/'], ['X-Vault-Namespace', '/root/'], ['X-Service-Namespace', '']]) {
      const r = await s.api('GET', 'secret/data/ns-probe', undefined, { headers: { [name!]: value! } });
      expect({ name, value, status: r.status, v: r.body?.data?.data?.v }).toEqual({ name, value, status: 200, v: 'root-ns' });
    }
    // A namespace that does not exist never falls back to the root namespace's mounts: the header
    // is joined to the path, and the joined path has no mount. Header/path splits are equivalent.
    const joined = ['nope/secret/data/ns-probe', 'nope/ns2/secret/data/ns-probe'];
    const viaPath = await s.api('GET', joined[0]!);
    const viaHeader = await s.api('GET', 'secret/data/ns-probe', undefined, { headers: { 'X-Service-Namespace': 'nope' } });
    const viaAlias = await s.api('GET', 'secret/data/ns-probe', undefined, { headers: { 'X-Vault-Namespace': '/nope/' } });
    const nestedSplit = await s.api('GET', 'ns2/secret/data/ns-probe', undefined, { headers: { 'X-Service-Namespace': 'nope/' } });
    const nestedHeader = await s.api('GET', 'secret/data/ns-probe', undefined, { headers: { 'X-Service-Namespace': 'nope/ns2' } });
    for (const r of [viaPath, viaHeader, viaAlias]) {
      expect(r.status).toBe(404);
      expect(r.body.errors).toEqual([`no handler for route "${joined[0]}". route entry not found.`]);
    }
    for (const r of [nestedSplit, nestedHeader]) expect(r.body.errors).toEqual([`no handler for route "${joined[1]}". route entry not found.`]);
    // Writes too: nothing lands in the root namespace's secret/.
    expect((await s.api('POST', 'secret/data/ns-probe', { data: { v: 'elsewhere' } }, { headers: { 'X-Service-Namespace': 'nope' } })).status).toBe(404);
    expect((await s.api('GET', 'secret/data/ns-probe')).body.data.data).toEqual({ v: 'root-ns' });
    // An unknown namespace is not a way around authentication, and a namespace cannot climb out with dot segments.
    expect((await s.api('GET', 'secret/data/ns-probe', undefined, { token: null, headers: { 'X-Service-Namespace': 'nope' } })).status).toBe(403);
    const dots = await s.api('GET', 'secret/data/ns-probe', undefined, { headers: { 'X-Service-Namespace': 'nope/../' } });
    expect(dots.status).toBe(400);
    expect(dots.body.errors[0]).toMatch(/invalid namespace/);
  });

  it('answers bad input with a 400 naming the problem, never a 500', async () => {
    const bad = await fetch(`${s.url}/v1/sys/mounts/x`, { method: 'POST', headers: { 'X-Service-Token': s.rootToken }, body: '{not json' });
    expect(bad.status).toBe(400);
    const wrongType = await s.api('POST', 'auth/token/create', { ttl: 'forever' });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.errors.join(' ')).toMatch(/ttl/);
    const noType = await s.api('POST', 'sys/mounts/foo', {});
    expect(noType.status).toBe(400);
    expect(noType.body.errors.join(' ')).toMatch(/type/);
  });

  it('serves ?help=1 with help text and an OpenAPI document relative to the path', async () => {
    const h = await s.api('GET', 'secret/data/app?help=1');
    expect(h.status).toBe(200);
    expect(typeof h.body.help).toBe('string');
    expect(h.body.openapi.openapi).toMatch(/^3\./);
    const sys = await s.api('GET', 'sys/mounts?help=1');
    expect(sys.body.help).toMatch(/mount/i);
  });

  it('mounts, tunes and unmounts engines; the mount table shows the running plugin version', async () => {
    expect((await s.api('POST', 'sys/mounts/kv1', { type: 'kv', options: { version: '1' } })).status).toBe(204);
    await s.api('POST', 'kv1/foo', { bar: 'baz' });
    expect((await s.api('GET', 'kv1/foo')).body.data).toEqual({ bar: 'baz' });
    await s.api('POST', 'sys/mounts/kv1/tune', { default_lease_ttl: '1h', max_lease_ttl: '2h' });
    const tune = await s.api('GET', 'sys/mounts/kv1/tune');
    expect(tune.body.data).toMatchObject({ default_lease_ttl: 3600, max_lease_ttl: 7200 });
    const mounts = await s.api('GET', 'sys/mounts');
    expect(mounts.body.data['kv1/']).toMatchObject({ type: 'kv', running_plugin_version: 'v0.1.0+builtin' });
    expect((await s.api('POST', 'sys/mounts/kv1/sub', { type: 'kv' })).status).toBe(400);
    expect((await s.api('DELETE', 'sys/mounts/kv1')).status).toBe(204);
    expect((await s.api('GET', 'kv1/foo')).status).toBe(404);
  });

  it('serves sys/metrics in the Prometheus text format', async () => {
    const r = await fetch(`${s.url}/v1/sys/metrics?format=prometheus`, { headers: { 'X-Service-Token': s.rootToken } });
    expect(r.headers.get('content-type')).toMatch(/text\/plain/);
    expect(await r.text()).toMatch(/# TYPE strongroom_request_duration_seconds histogram/);
  });
});
