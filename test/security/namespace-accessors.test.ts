/**
 * Issue 26, finding 2, replayed against the real binary: a token acts on
 * another token by its accessor (auth/token/lookup-accessor, renew-accessor,
 * revoke-accessor, sys/capabilities-accessor) only when that token belongs to
 * the request's namespace or one below it. A parent's or a sibling's token
 * gets exactly the answer of an accessor that does not exist. AppRole
 * SecretID accessors (per mount and role) are checked for the same gap.
 */
import { startDevServer, type RunningServer } from '../helpers/server';

jest.setTimeout(60_000);

let s: RunningServer;
const ns = (path: string) => ({ headers: { 'X-Vault-Namespace': path } });
const ACCESSOR_POLICY = ['lookup-accessor', 'renew-accessor', 'revoke-accessor'].map((p) => `path "auth/token/${p}" { capabilities = ["update"] }`).join('\n') + '\npath "sys/capabilities-accessor" { capabilities = ["update"] }';

/** A token of namespace `path` ('' for root) holding the accessor policy there, with its accessor. */
async function tokenIn(path: string, extra: Record<string, unknown> = {}): Promise<{ token: string; accessor: string }> {
  const where = path ? ns(path) : {};
  expect((await s.api('PUT', 'sys/policies/acl/accessors', { policy: ACCESSOR_POLICY }, where)).status).toBe(204);
  const r = await s.api('POST', 'auth/token/create', { policies: ['accessors'], ttl: '1h', ...extra }, where);
  expect(r.status).toBe(200);
  return { token: r.body.auth.client_token, accessor: r.body.auth.accessor };
}

let rootAccessor = '';
let nsa: { token: string; accessor: string };
let sibling: { token: string; accessor: string };
let child: { token: string; accessor: string };
let rootRenewable: { token: string; accessor: string };

beforeAll(async () => {
  s = await startDevServer();
  for (const [name, parent] of [['nsa', ''], ['nsb', ''], ['kid', 'nsa']] as const) {
    expect((await s.api('POST', `sys/namespaces/${name}`, {}, parent ? ns(parent) : {})).status).toBe(200);
  }
  rootAccessor = (await s.api('GET', 'auth/token/lookup-self')).body.data.accessor;
  nsa = await tokenIn('nsa');
  sibling = await tokenIn('nsb');
  child = await tokenIn('nsa/kid');
  rootRenewable = await tokenIn('', { renewable: true, ttl: '10m' });
});
afterAll(async () => {
  await s.stop('SIGKILL');
});

/** What the caller sees for an accessor: status and body, with the request id taken out. */
async function answer(caller: string, path: string, body: Record<string, unknown>) {
  const r = await s.api('POST', path, body, { token: caller, ...ns('nsa') });
  const { request_id: _ignored, ...rest } = (r.body ?? {}) as Record<string, unknown>;
  return { status: r.status, body: rest };
}

describe('from namespace nsa, tokens of the root namespace and of a sibling are out of reach', () => {
  it('lookup-accessor answers as for an unknown accessor, showing no policies or metadata', async () => {
    const unknown = await answer(nsa.token, 'auth/token/lookup-accessor', { accessor: 'NoSuchAccessor0000000000' });
    // Vault's 403 for an unknown accessor (issue 27).
    expect(unknown.status).toBe(403);
    for (const a of [rootAccessor, sibling.accessor, rootRenewable.accessor]) {
      expect(await answer(nsa.token, 'auth/token/lookup-accessor', { accessor: a })).toEqual(unknown);
    }
  });

  it('renew-accessor answers as for an unknown accessor and extends nothing', async () => {
    const before = (await s.api('POST', 'auth/token/lookup-accessor', { accessor: rootRenewable.accessor })).body.data.expire_time;
    const unknown = await answer(nsa.token, 'auth/token/renew-accessor', { accessor: 'NoSuchAccessor0000000000', increment: '1h' });
    expect(unknown.status).toBe(400);
    expect(await answer(nsa.token, 'auth/token/renew-accessor', { accessor: rootRenewable.accessor, increment: '1h' })).toEqual(unknown);
    expect((await s.api('POST', 'auth/token/lookup-accessor', { accessor: rootRenewable.accessor })).body.data.expire_time).toBe(before);
  });

  it('revoke-accessor answers as for an unknown accessor and revokes nothing', async () => {
    const unknown = await answer(nsa.token, 'auth/token/revoke-accessor', { accessor: 'NoSuchAccessor0000000000' });
    for (const a of [rootAccessor, sibling.accessor]) expect(await answer(nsa.token, 'auth/token/revoke-accessor', { accessor: a })).toEqual(unknown);
    // The root token and the sibling's token still work.
    expect((await s.api('GET', 'auth/token/lookup-self')).status).toBe(200);
    expect((await s.api('GET', 'auth/token/lookup-self', undefined, { token: sibling.token, ...ns('nsb') })).status).toBe(200);
  });

  it('sys/capabilities-accessor answers deny, as for an unknown accessor', async () => {
    const unknown = await answer(nsa.token, 'sys/capabilities-accessor', { accessor: 'NoSuchAccessor0000000000', paths: ['secret/x'] });
    expect(unknown.status).toBe(200);
    expect(unknown.body.data).toMatchObject({ capabilities: ['deny'] });
    const rootCaps = await answer(nsa.token, 'sys/capabilities-accessor', { accessor: rootAccessor, paths: ['secret/x'] });
    expect(rootCaps.body.data).toEqual(unknown.body.data);
  });
});

describe('the rule still lets a namespace act on its own tokens and those below it', () => {
  it('nsa looks up, renews and revokes its own and its child namespace\'s tokens', async () => {
    for (const t of [nsa, child]) {
      const r = await s.api('POST', 'auth/token/lookup-accessor', { accessor: t.accessor }, { token: nsa.token, ...ns('nsa') });
      expect(r.status).toBe(200);
      expect(r.body.data.policies).toContain('accessors');
    }
    const own = await tokenIn('nsa');
    expect((await s.api('POST', 'auth/token/renew-accessor', { accessor: own.accessor }, { token: nsa.token, ...ns('nsa') })).status).toBe(200);
    expect((await s.api('POST', 'auth/token/revoke-accessor', { accessor: child.accessor }, { token: nsa.token, ...ns('nsa') })).status).toBe(204);
    expect((await s.api('GET', 'auth/token/lookup-self', undefined, { token: child.token, ...ns('nsa/kid') })).status).toBe(403);
  });

  it('the root namespace reaches a token of nsa', async () => {
    const r = await s.api('POST', 'auth/token/lookup-accessor', { accessor: nsa.accessor });
    expect(r.status).toBe(200);
    expect(r.body.data.policies).toContain('accessors');
  });
});

describe('AppRole SecretID accessors are reached only through their own mount and role', () => {
  it('another namespace\'s mount, or another role, answers as for an unknown accessor and destroys nothing', async () => {
    for (const where of [{}, ns('nsa')]) {
      expect((await s.api('POST', 'sys/auth/approle', { type: 'approle' }, where)).status).toBe(204);
      for (const role of ['r', 'other']) expect((await s.api('POST', `auth/approle/role/${role}`, { token_policies: 'default' }, where)).status).toBe(204);
    }
    const secret = (await s.api('POST', 'auth/approle/role/r/secret-id', {})).body.data;
    const roleId = (await s.api('GET', 'auth/approle/role/r/role-id')).body.data.role_id;
    const lookup = (path: string, accessor: string, where = {}) => s.api('POST', path, { secret_id_accessor: accessor }, where).then((r) => r.status);
    const unknown = await lookup('auth/approle/role/r/secret-id-accessor/lookup', 'no-such-accessor', ns('nsa'));
    expect(await lookup('auth/approle/role/r/secret-id-accessor/lookup', secret.secret_id_accessor, ns('nsa'))).toBe(unknown);
    expect(await lookup('auth/approle/role/other/secret-id-accessor/lookup', secret.secret_id_accessor)).toBe(unknown);
    await s.api('POST', 'auth/approle/role/r/secret-id-accessor/destroy', { secret_id_accessor: secret.secret_id_accessor }, ns('nsa'));
    await s.api('POST', 'auth/approle/role/other/secret-id-accessor/destroy', { secret_id_accessor: secret.secret_id_accessor });
    expect(await lookup('auth/approle/role/r/secret-id-accessor/lookup', secret.secret_id_accessor)).toBe(200);
    expect((await s.api('POST', 'auth/approle/login', { role_id: roleId, secret_id: secret.secret_id }, { token: null })).status).toBe(200);
  });
});
