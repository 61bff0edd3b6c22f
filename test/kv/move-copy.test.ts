/**
 * kv v2 move and copy through the real binary and the kv plugin process: every
 * version, the metadata and the custom metadata travel in one storage batch;
 * the ACL rules are the paths the operation acts on (a move needs no `read`);
 * a write racing a move lands before or after it, never lost; an existing
 * destination is refused without `overwrite`; and the CLI verbs.
 */
import { startDevServer, type RunningServer } from '../helpers/server';
import { cliRunner } from '../helpers/cli';
import { subscribeSse } from '../helpers/events';

let srv: RunningServer;

async function tokenWith(policy: string, hcl: string): Promise<string> {
  expect((await srv.api('PUT', `sys/policies/acl/${policy}`, { policy: hcl })).status).toBe(204);
  return (await srv.api('POST', 'auth/token/create', { policies: [policy], ttl: '1h' })).body.auth.client_token as string;
}

async function write(path: string, data: Record<string, unknown>): Promise<void> {
  const r = await srv.api('POST', `secret/data/${path}`, { data });
  if (r.status !== 200) throw new Error(`write ${path}: ${r.status} ${r.text}`);
}

beforeAll(async () => {
  srv = await startDevServer();
}, 120_000);

describe('kv v2 move and copy', () => {
  it('moves five versions, the metadata and the custom metadata together', async () => {
    for (let v = 1; v <= 5; v++) await write('app/db', { password: `p${v}` });
    expect((await srv.api('POST', 'secret/metadata/app/db', { custom_metadata: { owner: 'team-a' }, max_versions: 7 })).status).toBe(204);
    const before = (await srv.api('GET', 'secret/metadata/app/db')).body.data;

    const r = await srv.api('POST', 'secret/move/app/db', { destination: 'archive/db' });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ path: 'archive/db', current_version: 5 });

    const after = (await srv.api('GET', 'secret/metadata/archive/db')).body.data;
    expect(after).toEqual(before);
    expect(after.custom_metadata).toEqual({ owner: 'team-a' });
    for (let v = 1; v <= 5; v++) {
      const d = await srv.api('GET', `secret/data/archive/db?version=${v}`);
      expect(d.body.data.data).toEqual({ password: `p${v}` });
    }
    expect((await srv.api('GET', 'secret/metadata/app/db')).status).toBe(404);
    expect((await srv.api('GET', 'secret/data/app/db?version=3')).status).toBe(404);
    // A new secret at the old path starts from version 1, its history gone with the move.
    await write('app/db', { password: 'new' });
    expect((await srv.api('GET', 'secret/metadata/app/db')).body.data.current_version).toBe(1);
  });

  it('publishes a change event for both ends of a move and a copy', async () => {
    const sub = await subscribeSse(srv.url, 'kv-v2/*', { token: 'root' });
    try {
      await write('ev/a', { v: '1' });
      expect((await srv.api('POST', 'secret/move/ev/a', { destination: 'ev/b' })).status).toBe(200);
      expect((await srv.api('POST', 'secret/copy/ev/b', { destination: 'ev/c' })).status).toBe(200);
      const from = await sub.waitForEvent((e) => e.event_type === 'kv-v2/move-from');
      const to = await sub.waitForEvent((e) => e.event_type === 'kv-v2/move-to');
      expect(from).toMatchObject({ path: 'secret/data/ev/a', metadata: { destination: 'ev/b', version: 1 } });
      expect(to).toMatchObject({ path: 'secret/data/ev/b', metadata: { source: 'ev/a', version: 1 } });
      expect(await sub.waitForEvent((e) => e.event_type === 'kv-v2/copy-from')).toMatchObject({ path: 'secret/data/ev/b' });
      expect(await sub.waitForEvent((e) => e.event_type === 'kv-v2/copy-to')).toMatchObject({ path: 'secret/data/ev/c' });
    } finally {
      sub.close();
    }
  });

  it('copies, keeping the source', async () => {
    await write('copy/src', { a: '1' });
    await write('copy/src', { a: '2' });
    expect((await srv.api('POST', 'secret/copy/copy/src', { destination: 'copy/dst' })).status).toBe(200);
    expect((await srv.api('GET', 'secret/data/copy/dst')).body.data.data).toEqual({ a: '2' });
    expect((await srv.api('GET', 'secret/data/copy/dst?version=1')).body.data.data).toEqual({ a: '1' });
    expect((await srv.api('GET', 'secret/data/copy/src')).body.data.data).toEqual({ a: '2' });
    // Each is its own secret afterwards.
    await write('copy/dst', { a: '3' });
    expect((await srv.api('GET', 'secret/data/copy/src')).body.data.data).toEqual({ a: '2' });
  });

  it('refuses an existing destination without overwrite (409, nothing changed) and replaces it with overwrite', async () => {
    await write('x/one', { v: 'one' });
    await write('x/two', { v: 'two' });
    const r = await srv.api('POST', 'secret/move/x/one', { destination: 'x/two' });
    expect(r.status).toBe(409);
    expect(r.body.errors.join(' ')).toMatch(/destination "x\/two" already exists; set overwrite/);
    expect((await srv.api('GET', 'secret/data/x/one')).body.data.data).toEqual({ v: 'one' });
    expect((await srv.api('GET', 'secret/data/x/two')).body.data.data).toEqual({ v: 'two' });
    expect((await srv.api('POST', 'secret/move/x/one', { destination: 'x/two', overwrite: true })).status).toBe(200);
    expect((await srv.api('GET', 'secret/data/x/two')).body.data.data).toEqual({ v: 'one' });
    expect((await srv.api('GET', 'secret/data/x/one')).status).toBe(404);
    // A missing source is a 404, a destination that climbs out is a 400 naming the field.
    expect((await srv.api('POST', 'secret/move/x/none', { destination: 'x/other' })).status).toBe(404);
    const bad = await srv.api('POST', 'secret/move/x/two', { destination: '../x/three' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('destination');
  });

  it('moves with the move policy and no read: the token still cannot read the secret', async () => {
    await write('vault/secret1', { token: 'hunter2' });
    const mover = await tokenWith(
      'mover',
      [
        'path "secret/metadata/vault/*" { capabilities = ["update"] }',
        'path "secret/data/vault/*" { capabilities = ["delete"] }',
        'path "secret/data/moved/*" { capabilities = ["create"] }',
      ].join('\n'),
    );
    expect((await srv.api('GET', 'secret/data/vault/secret1', undefined, { token: mover })).status).toBe(403);
    const r = await srv.api('POST', 'secret/move/vault/secret1', { destination: 'moved/secret1' }, { token: mover });
    expect(r.status).toBe(200);
    expect(JSON.stringify(r.body)).not.toContain('hunter2');
    expect((await srv.api('GET', 'secret/data/moved/secret1', undefined, { token: mover })).status).toBe(403);
    expect((await srv.api('GET', 'secret/data/moved/secret1')).body.data.data).toEqual({ token: 'hunter2' });

    // Without overwrite's `update` on the destination, overwriting is refused; copy needs `read`.
    await write('vault/secret2', { token: 'x' });
    await write('moved/secret2', { token: 'y' });
    expect((await srv.api('POST', 'secret/move/vault/secret2', { destination: 'moved/secret2', overwrite: true }, { token: mover })).status).toBe(403);
    expect((await srv.api('POST', 'secret/copy/vault/secret2', { destination: 'moved/secret3' }, { token: mover })).status).toBe(403);
    // Each requirement counts: without `delete` on the source's data path there is no move.
    const noDelete = await tokenWith('no-delete', 'path "secret/metadata/vault/*" { capabilities = ["update"] }\npath "secret/data/moved/*" { capabilities = ["create"] }');
    expect((await srv.api('POST', 'secret/move/vault/secret2', { destination: 'moved/secret4' }, { token: noDelete })).status).toBe(403);
    expect((await srv.api('GET', 'secret/data/vault/secret2')).body.data.data).toEqual({ token: 'x' });
    // copy with read on the source and create on the destination.
    const copier = await tokenWith('copier', 'path "secret/data/vault/*" { capabilities = ["read"] }\npath "secret/data/moved/*" { capabilities = ["create"] }');
    expect((await srv.api('POST', 'secret/copy/vault/secret2', { destination: 'moved/secret5' }, { token: copier })).status).toBe(200);
  });

  it('a write racing a move lands before or after it, never lost', async () => {
    for (let i = 0; i < 25; i++) {
      const src = `race/s${i}`;
      const dst = `race/d${i}`;
      await write(src, { n: 'first' });
      const [moved, written] = await Promise.all([
        srv.api('POST', `secret/move/${src}`, { destination: dst }),
        srv.api('POST', `secret/data/${src}`, { data: { n: 'racing' } }),
      ]);
      expect(moved.status).toBe(200);
      expect(written.status).toBe(200);
      const atDst = (await srv.api('GET', `secret/metadata/${dst}`)).body.data;
      const atSrc = await srv.api('GET', `secret/data/${src}`);
      if (atDst.current_version === 2) {
        // Before the move: it travelled with the secret, and nothing is left behind.
        expect((await srv.api('GET', `secret/data/${dst}`)).body.data.data).toEqual({ n: 'racing' });
        expect(atSrc.status).toBe(404);
      } else {
        // After: a new secret at the old path; the moved one is the first write only.
        expect(atDst.current_version).toBe(1);
        expect(atSrc.body.data.data).toEqual({ n: 'racing' });
        expect(atSrc.body.data.metadata.version).toBe(1);
      }
    }
  }, 120_000);

  it('works inside a namespace with a token of that namespace, and scans there', async () => {
    const ns = { 'X-Vault-Namespace': 'acme' };
    expect((await srv.api('POST', 'sys/namespaces/acme', {})).status).toBe(200);
    expect((await srv.api('POST', 'sys/mounts/kv', { type: 'kv', options: { version: '2' } }, { headers: ns })).status).toBe(204);
    expect((await srv.api('POST', 'kv/data/a/s', { data: { v: 'ns' } }, { headers: ns })).status).toBe(200);
    const policy = 'path "kv/metadata/a/*" { capabilities = ["update"] }\npath "kv/data/a/*" { capabilities = ["delete"] }\npath "kv/data/b/*" { capabilities = ["create"] }\npath "kv/metadata/" { capabilities = ["scan"] }\npath "kv/metadata/b/*" { capabilities = ["list"] }';
    expect((await srv.api('PUT', 'sys/policies/acl/mover', { policy }, { headers: ns })).status).toBe(204);
    const t = (await srv.api('POST', 'auth/token/create', { policies: ['mover'] }, { headers: ns })).body.auth.client_token as string;
    expect((await srv.api('POST', 'kv/move/a/s', { destination: 'b/s' }, { token: t, headers: ns })).status).toBe(200);
    expect((await srv.api('GET', 'acme/kv/data/b/s')).body.data.data).toEqual({ v: 'ns' });
    expect((await srv.api('GET', 'acme/kv/metadata/?scan=true', undefined, { token: t })).body.data.keys).toEqual(['b/s']);
    // The root namespace's secret/ is out of this token's reach.
    expect((await srv.api('POST', 'secret/move/copy/src', { destination: 'b/s' }, { token: t })).status).toBe(403);
  });

  it('CLI: kv move and kv copy', async () => {
    const cli = cliRunner({ addr: srv.url, token: 'root' });
    await write('cli/a', { k: 'v' });
    const mv = await cli.run(['kv', 'move', 'secret/cli/a', 'secret/cli/b']);
    expect(mv.code).toBe(0);
    expect(mv.stdout).toContain('Moved secret/cli/a to secret/cli/b');
    const cp = await cli.run(['kv', 'copy', '-mount=secret', 'cli/b', 'cli/c']);
    expect(cp.code).toBe(0);
    expect((await srv.api('GET', 'secret/data/cli/c')).body.data.data).toEqual({ k: 'v' });
    const again = await cli.run(['kv', 'copy', 'secret/cli/b', 'secret/cli/c']);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('already exists');
    expect((await cli.run(['kv', 'copy', '-overwrite', 'secret/cli/b', 'secret/cli/c'])).code).toBe(0);
  });
});
