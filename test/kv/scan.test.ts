/**
 * SCAN (recursive listing) through the real binary and the kv and transit
 * plugin processes: the SCAN verb and `?scan=true`, every key below a path
 * sorted and paged by `after`/`limit`, the `scan` capability (not implied by
 * `list`), keys outside the caller's read/list grants left out, and the CLI.
 */
import { request } from 'node:http';
import { startDevServer, type RunningServer } from '../helpers/server';
import { cliRunner } from '../helpers/cli';

let srv: RunningServer;

/** 200 folders three levels deep (a/b/c), 25 secrets each: 5,000 keys. */
const FOLDERS = Array.from({ length: 200 }, (_, i) => `t${i % 4}/g${Math.floor(i / 4) % 10}/f${String(i).padStart(3, '0')}`);
const EXPECTED = FOLDERS.flatMap((f) => Array.from({ length: 25 }, (_, j) => `${f}/s${String(j).padStart(2, '0')}`));

/** The SCAN verb itself on a raw connection (fetch may refuse unknown methods). */
function scanVerb(path: string, token: string): Promise<{ status: number; body: any }> {
  const url = new URL(`${srv.url}/v1/${path}`);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname + url.search, method: 'SCAN', headers: { 'X-Vault-Token': token } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function pool<T>(items: T[], n: number, fn: (t: T) => Promise<void>): Promise<void> {
  let i = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (i < items.length) await fn(items[i++] as T);
  }));
}

async function tokenWith(policy: string, hcl: string): Promise<string> {
  expect((await srv.api('PUT', `sys/policies/acl/${policy}`, { policy: hcl })).status).toBe(204);
  const r = await srv.api('POST', 'auth/token/create', { policies: [policy], ttl: '1h' });
  return r.body.auth.client_token as string;
}

beforeAll(async () => {
  srv = await startDevServer();
  await pool(EXPECTED, 12, async (k) => {
    const r = await srv.api('POST', `secret/data/${k}`, { data: { v: k } });
    if (r.status !== 200) throw new Error(`write ${k}: ${r.status} ${r.text}`);
  });
}, 600_000);

describe('SCAN', () => {
  it('pages 5,000 keys in 200 folders three levels deep, 1,000 at a time, none missing or repeated', async () => {
    const seen: string[] = [];
    let after = '';
    let pages = 0;
    for (;;) {
      const r = await srv.api('GET', `secret/metadata/?scan=true&limit=1000${after ? `&after=${encodeURIComponent(after)}` : ''}`);
      if (r.status === 404) break;
      expect(r.status).toBe(200);
      const keys = r.body.data.keys as string[];
      pages++;
      seen.push(...keys);
      if (keys.length < 1000) break;
      after = keys[keys.length - 1] as string;
    }
    expect(pages).toBeGreaterThanOrEqual(5);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual([...EXPECTED].sort());
    // Directories are not entries of their own.
    expect(seen.some((k) => k.endsWith('/'))).toBe(false);
  }, 120_000);

  it('answers the SCAN verb like ?scan=true, relative to the path, and 404 below nothing', async () => {
    const viaVerb = await scanVerb('secret/metadata/t1/g3', 'root');
    expect(viaVerb.status).toBe(200);
    const viaQuery = await srv.api('GET', 'secret/metadata/t1/g3/?scan=true');
    expect(viaVerb.body.data.keys).toEqual(viaQuery.body.data.keys);
    expect(viaVerb.body.data.keys).toEqual(EXPECTED.filter((k) => k.startsWith('t1/g3/')).map((k) => k.slice('t1/g3/'.length)).sort());
    expect((await scanVerb('secret/metadata/nothing-here', 'root')).status).toBe(404);
  });

  it('needs the scan capability (list is not enough) and shows only what the token may read or list', async () => {
    const listOnly = await tokenWith('list-only', 'path "secret/metadata/*" { capabilities = ["list", "read"] }');
    expect((await scanVerb('secret/metadata/', listOnly)).status).toBe(403);
    expect((await srv.api('GET', 'secret/metadata/?list=true', undefined, { token: listOnly })).status).toBe(200);

    const oneSubtree = await tokenWith(
      'scan-t2',
      'path "secret/metadata/" { capabilities = ["scan"] }\npath "secret/metadata/t2/*" { capabilities = ["read"] }\npath "secret/metadata/t2/g7/*" { capabilities = ["deny"] }',
    );
    const seen: string[] = [];
    let after = '';
    for (;;) {
      const r = await srv.api('GET', `secret/metadata/?scan=true&limit=300${after ? `&after=${encodeURIComponent(after)}` : ''}`, undefined, { token: oneSubtree });
      if (r.status === 404) break;
      expect(r.status).toBe(200);
      const keys = r.body.data.keys as string[];
      // A page thinned by the ACL is filled from further on: only the last page is short.
      seen.push(...keys);
      if (keys.length < 300) break;
      after = keys[keys.length - 1] as string;
    }
    const allowed = EXPECTED.filter((k) => k.startsWith('t2/') && !k.startsWith('t2/g7/')).sort();
    expect(seen).toEqual(allowed);
    // A subtree it may not see: the same 404 as an empty one.
    const none = await tokenWith('scan-only', 'path "secret/metadata/*" { capabilities = ["scan"] }');
    const hidden = await srv.api('GET', 'secret/metadata/t2/?scan=true', undefined, { token: none });
    const empty = await srv.api('GET', 'secret/metadata/nothing/?scan=true', undefined, { token: none });
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual(empty.body);
  }, 120_000);

  it('scans kv v1, transit keys and an engine\'s roles', async () => {
    expect((await srv.api('POST', 'sys/mounts/kv1', { type: 'kv', options: { version: '1' } })).status).toBe(204);
    for (const k of ['a', 'b/c', 'b/d/e']) expect((await srv.api('POST', `kv1/${k}`, { v: 1 })).status).toBe(204);
    expect((await srv.api('GET', 'kv1/?scan=true')).body.data.keys).toEqual(['a', 'b/c', 'b/d/e']);
    expect((await srv.api('GET', 'kv1/b?scan=true')).body.data.keys).toEqual(['c', 'd/e']);

    expect((await srv.api('POST', 'sys/mounts/transit', { type: 'transit' })).status).toBe(204);
    for (const k of ['k2', 'k1', 'k3']) expect([200, 204]).toContain((await srv.api('POST', `transit/keys/${k}`, {})).status);
    expect((await srv.api('GET', 'transit/keys?scan=true&limit=2')).body.data.keys).toEqual(['k1', 'k2']);
    expect((await srv.api('GET', 'transit/keys?scan=true&after=k2')).body.data.keys).toEqual(['k3']);

    expect((await srv.api('POST', 'sys/auth/approle', { type: 'approle' })).status).toBe(204);
    for (const r of ['web', 'api']) expect((await srv.api('POST', `auth/approle/role/${r}`, { token_policies: ['default'] })).status).toBe(204);
    expect((await scanVerb('auth/approle/role', 'root')).body.data.keys).toEqual(['api', 'web']);

    expect((await srv.api('POST', 'sys/mounts/ssh', { type: 'ssh' })).status).toBe(204);
    for (const r of ['ops', 'dev', 'ci']) expect([200, 204]).toContain((await srv.api('POST', `ssh/roles/${r}`, { key_type: 'otp', default_user: 'u', cidr_list: '10.0.0.0/8' })).status);
    expect((await scanVerb('ssh/roles?limit=2', 'root')).body.data.keys).toEqual(['ci', 'dev']);
  });

  it('CLI: kv list -recursive and scan PATH', async () => {
    const cli = cliRunner({ addr: srv.url, token: 'root' });
    const kv = await cli.run(['kv', 'list', '-recursive', '-format=json', 'secret/t3/g1']);
    expect(kv.code).toBe(0);
    expect(JSON.parse(kv.stdout)).toEqual(EXPECTED.filter((k) => k.startsWith('t3/g1/')).map((k) => k.slice(6)).sort());
    const all = await cli.run(['scan', '-format=json', 'secret/metadata']);
    expect(all.code).toBe(0);
    expect(JSON.parse(all.stdout)).toEqual([...EXPECTED].sort());
  }, 120_000);
});
