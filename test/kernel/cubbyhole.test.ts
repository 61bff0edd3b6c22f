/**
 * The cubbyhole through the real binary: mounted everywhere and not movable,
 * each token's private kv store that no other token (root included) sees,
 * none for batch tokens, destroyed with its token and with a revoked parent's
 * children (the storage keys gone, checked in LevelDB, across a restart), in
 * a namespace, and response wrapping kept in the wrapping token's cubbyhole
 * so lookup and unwrap work after a restart.
 */
import { join } from 'node:path';
import { levelStorageKeys } from '../helpers/level-keys';
import { restartUnsealed, startUnsealedLevelServer, tokenWithPolicy, type RunningServer } from '../helpers/server';

jest.setTimeout(120_000);

let s: RunningServer & { configFile: string };
let cubbyUuid = '';

async function restart(): Promise<void> {
  s = await restartUnsealed(s);
}

/** Every storage key, read from LevelDB while the server is stopped (keys are plain text). */
const storageKeys = () => levelStorageKeys(join(s.dataDir, 'data'));
const cubbyholeKeys = (keys: string[]) => keys.filter((k) => k.startsWith(`logical/${cubbyUuid}/`));

/** A service token with only the default policy (which grants cubbyhole/*). */
async function defaultToken(extra: Record<string, unknown> = {}, namespace?: string): Promise<string> {
  const r = await s.api('POST', 'auth/token/create', { policies: ['default'], ...extra }, namespace ? { headers: { 'X-Vault-Namespace': namespace } } : {});
  expect(r.status).toBe(200);
  return r.body.auth.client_token as string;
}

beforeAll(async () => {
  s = await startUnsealedLevelServer();
  cubbyUuid = (await s.api('GET', 'sys/mounts')).body.data['cubbyhole/'].uuid;
});
afterAll(async () => {
  await s.stop('SIGKILL');
});

describe('cubbyhole', () => {
  it('is mounted at cubbyhole/ and listed by sys/mounts as Vault lists it', async () => {
    const m = (await s.api('GET', 'sys/mounts')).body.data['cubbyhole/'];
    expect(m).toMatchObject({ type: 'cubbyhole', local: true, description: 'per-token private secret storage', seal_wrap: false });
    expect(typeof m.uuid).toBe('string');
    expect(typeof m.accessor).toBe('string');
  });

  it('lets a token write, read, list and delete its own secrets (any JSON, kv version 1)', async () => {
    const t = await defaultToken();
    expect((await s.api('POST', 'cubbyhole/app/db', { password: 'p1', nested: { n: 1, list: [1, 'a'] } }, { token: t })).status).toBe(204);
    expect((await s.api('PUT', 'cubbyhole/top', { a: 'x' }, { token: t })).status).toBe(204);
    const r = await s.api('GET', 'cubbyhole/app/db', undefined, { token: t });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ password: 'p1', nested: { n: 1, list: [1, 'a'] } });
    expect((await s.api('LIST', 'cubbyhole/', undefined, { token: t })).body.data.keys).toEqual(['app/', 'top']);
    expect((await s.api('GET', 'cubbyhole/app?list=true', undefined, { token: t })).body.data.keys).toEqual(['db']);
    // A write replaces the whole secret.
    expect((await s.api('POST', 'cubbyhole/app/db', { password: 'p2' }, { token: t })).status).toBe(204);
    expect((await s.api('GET', 'cubbyhole/app/db', undefined, { token: t })).body.data).toEqual({ password: 'p2' });
    expect((await s.api('DELETE', 'cubbyhole/app/db', undefined, { token: t })).status).toBe(204);
    expect((await s.api('GET', 'cubbyhole/app/db', undefined, { token: t })).status).toBe(404);
    expect((await s.api('POST', 'cubbyhole/empty', {}, { token: t })).status).toBe(400);
  });

  it('is invisible to every other token, root included', async () => {
    const a = await defaultToken();
    const b = await defaultToken();
    expect((await s.api('POST', 'cubbyhole/mine', { owner: 'a' }, { token: a })).status).toBe(204);
    for (const other of [b, s.rootToken]) {
      expect((await s.api('GET', 'cubbyhole/mine', undefined, { token: other })).status).toBe(404);
      expect((await s.api('LIST', 'cubbyhole/', undefined, { token: other })).body?.data?.keys ?? []).not.toContain('mine');
    }
    // The same path in root's and b's cubbyholes is theirs alone.
    expect((await s.api('POST', 'cubbyhole/mine', { owner: 'root' }, {})).status).toBe(204);
    expect((await s.api('POST', 'cubbyhole/mine', { owner: 'b' }, { token: b })).status).toBe(204);
    expect((await s.api('GET', 'cubbyhole/mine', undefined, { token: a })).body.data).toEqual({ owner: 'a' });
    expect((await s.api('GET', 'cubbyhole/mine', undefined, { token: b })).body.data).toEqual({ owner: 'b' });
    expect((await s.api('GET', 'cubbyhole/mine')).body.data).toEqual({ owner: 'root' });
    expect((await s.api('DELETE', 'cubbyhole/mine', undefined, { token: b })).status).toBe(204);
    expect((await s.api('GET', 'cubbyhole/mine', undefined, { token: a })).body.data).toEqual({ owner: 'a' });
  });

  it('answers SCAN below a folder of the caller\'s own cubbyhole only (the default policy grants scan there)', async () => {
    const a = await defaultToken();
    const b = await defaultToken();
    for (const k of ['top', 'app/db', 'app/deep/x', 'app/deep/y', 'zz/last']) expect((await s.api('POST', `cubbyhole/${k}`, { v: k }, { token: a })).status).toBe(204);
    expect((await s.api('POST', 'cubbyhole/app/other', { v: 'b' }, { token: b })).status).toBe(204);
    expect((await s.api('POST', 'cubbyhole/app/root-only', { v: 'root' })).status).toBe(204);

    const scan = (path: string, token: string) => s.api('GET', `cubbyhole/${path}?scan=true`, undefined, { token });
    expect((await scan('', a)).body.data.keys).toEqual(['app/db', 'app/deep/x', 'app/deep/y', 'top', 'zz/last']);
    expect((await scan('app', a)).body.data.keys).toEqual(['db', 'deep/x', 'deep/y']);
    expect((await s.api('GET', 'cubbyhole/app/?scan=true&after=db&limit=1', undefined, { token: a })).body.data.keys).toEqual(['deep/x']);
    // Another token's, and root's, scans see only their own secrets.
    expect((await scan('', b)).body.data.keys).toEqual(['app/other']);
    expect((await scan('app', s.rootToken)).body.data.keys).toEqual(['root-only']);
    expect((await scan('nothing', a)).status).toBe(404);

    // The scan capability is needed: list alone does not grant it.
    const lister = await tokenWithPolicy(s, 'path "cubbyhole/*" { capabilities = ["create", "read", "list"] }', { no_default_policy: true });
    expect((await s.api('POST', 'cubbyhole/x/y', { v: 1 }, { token: lister })).status).toBe(204);
    expect((await s.api('LIST', 'cubbyhole/x', undefined, { token: lister })).status).toBe(200);
    expect((await scan('x', lister)).status).toBe(403);
  });

  it('refuses batch tokens, as Vault does', async () => {
    const batch = await defaultToken({ type: 'batch' });
    const r = await s.api('POST', 'cubbyhole/x', { v: 1 }, { token: batch });
    expect(r.status).toBe(400);
    expect(r.body.errors.join(' ')).toContain("cubbyhole operations are only supported by 'service' type tokens");
  });

  it('cannot be disabled, moved, mounted again or replaced', async () => {
    const d = await s.api('DELETE', 'sys/mounts/cubbyhole');
    expect(d.status).toBe(400);
    expect(d.body.errors.join(' ')).toContain('cannot unmount "cubbyhole/"');
    const mv = await s.api('POST', 'sys/remount', { from: 'cubbyhole', to: 'elsewhere' });
    expect(mv.status).toBe(400);
    expect(mv.body.errors.join(' ')).toContain('cannot remount "cubbyhole/"');
    const second = await s.api('POST', 'sys/mounts/cubby2', { type: 'cubbyhole' });
    expect(second.status).toBe(403);
    expect(second.body.errors.join(' ')).toContain('mount type of "cubbyhole" is not mountable');
    expect((await s.api('POST', 'sys/mounts/cubbyhole', { type: 'kv' })).status).toBe(400);
    expect((await s.api('GET', 'sys/mounts')).body.data['cubbyhole/'].uuid).toBe(cubbyUuid);
  });

  it('exists in every namespace, new ones too, private there as well', async () => {
    expect((await s.api('POST', 'sys/namespaces/team')).status).toBe(200);
    const team = { 'X-Vault-Namespace': 'team' };
    const m = (await s.api('GET', 'sys/mounts', undefined, { headers: team })).body.data['cubbyhole/'];
    expect(m).toMatchObject({ type: 'cubbyhole', local: true });
    expect(m.uuid).not.toBe(cubbyUuid);
    const t = await defaultToken({}, 'team');
    expect((await s.api('POST', 'cubbyhole/k', { v: 'team' }, { token: t, headers: team })).status).toBe(204);
    expect((await s.api('GET', 'team/cubbyhole/k', undefined, { token: t })).body.data).toEqual({ v: 'team' });
    // Root acting in the namespace has a cubbyhole of its own there.
    expect((await s.api('GET', 'team/cubbyhole/k')).status).toBe(404);
    expect((await s.api('DELETE', 'sys/mounts/cubbyhole', undefined, { headers: team })).status).toBe(400);
  });

  it('is destroyed with its token, and with a revoked parent\'s children: the keys are gone, across a restart', async () => {
    const maker = await tokenWithPolicy(s, 'path "auth/token/create" { capabilities = ["update"] }\npath "cubbyhole/*" { capabilities = ["create", "read", "update", "delete", "list"] }');
    const child = (await s.api('POST', 'auth/token/create', {}, { token: maker })).body.auth.client_token as string;
    const lone = await defaultToken();
    const keeper = await defaultToken();
    for (const [token, name] of [[maker, 'parent-secret'], [child, 'child-secret'], [lone, 'lone-secret'], [keeper, 'keeper-secret']] as const) {
      expect((await s.api('POST', `cubbyhole/${name}`, { v: name }, { token })).status).toBe(204);
    }
    await s.stop('SIGTERM');
    const before = cubbyholeKeys(await storageKeys());
    for (const name of ['parent-secret', 'child-secret', 'lone-secret', 'keeper-secret']) expect(before.filter((k) => k.endsWith(`/${name}`))).toHaveLength(1);
    // The key names a token by its HMAC, never by its id.
    for (const t of [maker, child, lone, keeper]) expect((await storageKeys()).some((k) => k.includes(t))).toBe(false);
    await restart();

    expect((await s.api('POST', 'auth/token/revoke', { token: lone })).status).toBe(204);
    expect((await s.api('POST', 'auth/token/revoke', { token: maker })).status).toBe(204);
    for (const t of [maker, child, lone]) expect((await s.api('GET', 'cubbyhole/', undefined, { token: t, headers: {} })).status).toBe(403);
    expect((await s.api('GET', 'cubbyhole/keeper-secret', undefined, { token: keeper })).body.data).toEqual({ v: 'keeper-secret' });

    await s.stop('SIGTERM');
    const after = cubbyholeKeys(await storageKeys());
    expect(after.filter((k) => /\/(parent|child|lone)-secret$/.test(k))).toEqual([]);
    expect(after.filter((k) => k.endsWith('/keeper-secret'))).toHaveLength(1);
    await restart();
    expect((await s.api('GET', 'cubbyhole/keeper-secret', undefined, { token: keeper })).body.data).toEqual({ v: 'keeper-secret' });
    await s.stop('SIGTERM');
    expect(cubbyholeKeys(await storageKeys()).filter((k) => /\/(parent|child|lone)-secret$/.test(k))).toEqual([]);
    await restart();
  });

  it('keeps a wrapped response in the wrapping token\'s cubbyhole: lookup and unwrap work after a restart, and it goes with the token', async () => {
    const w = await s.api('POST', 'sys/wrapping/wrap', { payload: 'wrapped-value' }, { headers: { 'X-Vault-Wrap-TTL': '10m' } });
    expect(w.status).toBe(200);
    const token = w.body.wrap_info.token as string;
    await s.stop('SIGTERM');
    const keys = await storageKeys();
    expect(keys.filter((k) => k.startsWith('sys/wrapped/'))).toEqual([]);
    const responseKeys = cubbyholeKeys(keys).filter((k) => k.endsWith('/response'));
    expect(responseKeys).toHaveLength(1);
    await restart();

    const look = await s.api('POST', 'sys/wrapping/lookup', { token }, { token: null });
    expect(look.status).toBe(200);
    expect(look.body.data).toMatchObject({ creation_ttl: 600, creation_path: 'sys/wrapping/wrap' });
    // Nobody else reads it through cubbyhole/response: it is the wrapping token's own.
    expect((await s.api('GET', 'cubbyhole/response')).status).toBe(404);
    const u = await s.api('POST', 'sys/wrapping/unwrap', { token });
    expect(u.status).toBe(200);
    expect(u.body.data).toEqual({ payload: 'wrapped-value' });
    expect((await s.api('POST', 'sys/wrapping/unwrap', { token })).status).toBe(400);

    await s.stop('SIGTERM');
    expect(await storageKeys()).not.toContain(responseKeys[0]);
    await restart();
  });
});
