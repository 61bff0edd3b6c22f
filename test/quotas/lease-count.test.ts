/**
 * Lease-count quotas through the real binary, the database engine process and
 * postgresql-database-plugin on a real PostgreSQL: 50 parallel credential requests against a
 * quota of 10 create exactly 10 leases and exactly 10 database roles (the 40 refused ones reach
 * no plugin); revoking frees places; a failed request or one that answers no lease gives its
 * place back; the count holds across a restart (rebuilt from the lease
 * store at unseal); tokens are leases too (auth/token/create and a userpass login are counted,
 * and a refused one leaves no token); a rule on an auth mount's role counts that role's logins
 * only, across a restart too; response-wrapping tokens take their own place first.
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { postgresUrl } from '../helpers/databases';
import { restartUnsealed, startUnsealedLevelServer, type RunningServer } from '../helpers/server';

jest.setTimeout(180_000);

type Server = RunningServer & { configFile: string };
let s: Server;
let superUrl: URL;
const tag = randomBytes(4).toString('hex');
const ADMIN = `sr_qadmin_${tag}`;
const ADMIN_PW = `Adm-${randomBytes(12).toString('hex')}`;
// Eight characters: the engine's usernames (v-<display name>-<role>-...) keep that much of a role name.
const ROLE = `q${tag.slice(0, 7)}`;

async function superQuery<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
  const c = new Client({ connectionString: superUrl.href, connectionTimeoutMillis: 5000 });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows as T[];
  } finally {
    await c.end();
  }
}
/** The database roles the engine made for ROLE (its usernames carry the role name). */
const issuedRoles = async () => (await superQuery<{ n: string }>(`SELECT count(*)::text AS n FROM pg_roles WHERE rolname LIKE $1`, [`v-%-${ROLE}-%`]))[0]!.n;
const leaseIds = async () => {
  const r = await s.api('LIST', `sys/leases/lookup/database/creds/${ROLE}/`);
  return r.status === 404 ? [] : (r.body.data.keys as string[]);
};
const counter = async (name: string) => (await s.api('GET', `sys/quotas/lease-count/${name}`)).body.data.counter as number;
const creds = () => s.api('GET', `database/creds/${ROLE}`);
const accessors = async () => ((await s.api('LIST', 'auth/token/accessors')).body.data.keys as string[]).length;

beforeAll(async () => {
  superUrl = new URL(postgresUrl());
  await superQuery(`CREATE ROLE "${ADMIN}" WITH LOGIN SUPERUSER PASSWORD '${ADMIN_PW}'`);
  s = await startUnsealedLevelServer();
  expect((await s.api('POST', 'sys/mounts/database', { type: 'database' })).status).toBe(204);
  const conn = await s.api('POST', 'database/config/pg', {
    plugin_name: 'postgresql-database-plugin',
    connection_url: `postgresql://{{username}}:{{password}}@${superUrl.host}${superUrl.pathname}`,
    username: ADMIN,
    password: ADMIN_PW,
    allowed_roles: [ROLE],
  });
  expect([conn.status, conn.text]).toEqual([204, '']);
  const role = await s.api('POST', `database/roles/${ROLE}`, {
    db_name: 'pg',
    creation_statements: [`CREATE ROLE "{{name}}" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}'`],
    revocation_statements: [`DROP ROLE IF EXISTS "{{name}}"`],
    default_ttl: '1h',
  });
  expect(role.status).toBe(204);
});

afterAll(async () => {
  await s?.stop();
  for (const r of await superQuery<{ rolname: string }>(`SELECT rolname FROM pg_roles WHERE rolname LIKE $1 OR rolname = $2`, [`%${ROLE}%`, ADMIN])) {
    await superQuery(`DROP ROLE IF EXISTS "${r.rolname}"`);
  }
});

describe('lease-count quotas', () => {
  it('50 parallel credential requests against a quota of 10 create exactly 10 leases and 10 database roles', async () => {
    expect((await s.api('POST', 'sys/quotas/lease-count/pg', { path: `database/creds/${ROLE}`, max_leases: 10 })).status).toBe(204);
    const answers = await Promise.all(Array.from({ length: 50 }, () => creds()));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((x) => x === 200)).toHaveLength(10);
    expect(statuses.filter((x) => x === 429)).toHaveLength(40);
    for (const a of answers.filter((x) => x.status === 429)) expect(a.body.errors[0]).toMatch(/lease count quota exceeded/);
    expect(await issuedRoles()).toBe('10');
    expect(await leaseIds()).toHaveLength(10);
    expect(await counter('pg')).toBe(10);
    // An answer that leaves the quota at 90 % or more says so (which ones, the order of completion decides).
    const warned = answers.filter((a) => a.headers.get('warning') !== null);
    expect(warned.length).toBeGreaterThanOrEqual(1);
    for (const a of warned) {
      expect(a.status).toBe(200);
      expect(a.headers.get('warning')).toMatch(/^299 strongroom "lease count quota 'pg' is at (9|10) of 10 leases"$/);
    }
    const metrics = (await s.api('GET', 'sys/metrics?format=prometheus')).text;
    expect(metrics).toMatch(/strongroom_quota_lease_count_violation\{name="pg",namespace="root"[^}]*\} 40/);
    expect(metrics).toMatch(/strongroom_quota_lease_count_counter\{name="pg",namespace="root"[^}]*\} 10/);
    expect(metrics).toMatch(/strongroom_quota_lease_count_max\{name="pg",namespace="root"[^}]*\} 10/);
  });

  it('frees a place for each revoked lease, and no more', async () => {
    const ids = await leaseIds();
    for (const id of ids.slice(0, 3)) {
      expect((await s.api('POST', 'sys/leases/revoke', { lease_id: `database/creds/${ROLE}/${id}`, sync: true })).status).toBe(204);
    }
    expect(await counter('pg')).toBe(7);
    expect(await issuedRoles()).toBe('7');
    const again = await Promise.all(Array.from({ length: 8 }, () => creds()));
    expect(again.map((a) => a.status).filter((x) => x === 200)).toHaveLength(3);
    expect(again.map((a) => a.status).filter((x) => x === 429)).toHaveLength(5);
    expect(await issuedRoles()).toBe('10');
    expect(await counter('pg')).toBe(10);
  });

  it('holds the count across a restart: rebuilt from the lease store at unseal', async () => {
    await s.stop();
    s = await restartUnsealed(s);
    expect((await creds()).status).toBe(429);
    expect(await counter('pg')).toBe(10);
    expect(await issuedRoles()).toBe('10');
    const [first] = await leaseIds();
    expect((await s.api('POST', 'sys/leases/revoke', { lease_id: `database/creds/${ROLE}/${first}`, sync: true })).status).toBe(204);
    expect((await creds()).status).toBe(200);
    expect((await creds()).status).toBe(429);
    expect(await issuedRoles()).toBe('10');
  });

  it('counts a rule written over existing leases from those leases', async () => {
    expect((await s.api('POST', 'sys/quotas/lease-count/whole-mount', { path: 'database/', max_leases: 100 })).status).toBe(204);
    // The exact path's rule is the more specific one: the mount rule counts nothing of it.
    expect(await counter('whole-mount')).toBe(0);
    expect((await s.api('DELETE', 'sys/quotas/lease-count/pg')).status).toBe(204);
    expect(await counter('whole-mount')).toBe(10);
    expect((await s.api('POST', 'sys/quotas/lease-count/whole-mount', { max_leases: 10 })).status).toBe(204);
    expect((await creds()).status).toBe(429);
    expect((await s.api('DELETE', 'sys/quotas/lease-count/whole-mount')).status).toBe(204);
  });

  it('gives the place back when the plugin fails or answers no lease', async () => {
    const bad = `b${tag.slice(0, 7)}`;
    expect((await s.api('POST', 'database/config/pg', { allowed_roles: [ROLE, bad] })).status).toBe(204);
    expect((await s.api('POST', `database/roles/${bad}`, { db_name: 'pg', creation_statements: ['THIS IS NOT SQL'], default_ttl: '1h' })).status).toBe(204);
    expect((await s.api('POST', 'sys/quotas/lease-count/failing', { path: `database/creds/${bad}`, max_leases: 1 })).status).toBe(204);
    for (let i = 0; i < 3; i++) {
      const r = await s.api('GET', `database/creds/${bad}`);
      expect(r.status).not.toBe(429);
      expect(r.status).toBeGreaterThanOrEqual(400);
    }
    expect(await counter('failing')).toBe(0);
    // Reads that answer no lease take no place either.
    expect((await s.api('POST', 'sys/quotas/lease-count/no-lease', { path: 'database/roles/*', max_leases: 1 })).status).toBe(204);
    for (let i = 0; i < 3; i++) expect((await s.api('GET', `database/roles/${ROLE}`)).status).toBe(200);
    expect(await counter('no-lease')).toBe(0);
  });

  it('counts tokens: auth/token/create past its quota is a 429 and makes no token', async () => {
    expect((await s.api('POST', 'sys/quotas/lease-count/tokens', { path: 'auth/token/create', max_leases: 3 })).status).toBe(204);
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await s.api('POST', 'auth/token/create', { ttl: '1h', policies: ['default'] });
      expect(r.status).toBe(200);
      made.push(r.body.auth.client_token);
      // The third leaves the quota at 100 %: only it warns (90 % of 3 is 2.7).
      expect(r.headers.get('warning')).toBe(i === 2 ? `299 strongroom "lease count quota 'tokens' is at 3 of 3 leases"` : null);
    }
    const before = await accessors();
    const refused = await s.api('POST', 'auth/token/create', { ttl: '1h', policies: ['default'] });
    expect(refused.status).toBe(429);
    expect(refused.body.errors[0]).toMatch(/lease count quota exceeded/);
    expect(await accessors()).toBe(before);
    expect(await counter('tokens')).toBe(3);
    // Revoking a token frees its place.
    expect((await s.api('POST', 'auth/token/revoke', { token: made[0] })).status).toBe(204);
    expect(await counter('tokens')).toBe(2);
    expect((await s.api('POST', 'auth/token/create', { ttl: '1h', policies: ['default'] })).status).toBe(200);
    expect((await s.api('POST', 'auth/token/create', { ttl: '1h', policies: ['default'] })).status).toBe(429);
  });

  it('counts the tokens of logins: a userpass login past its quota is a 429 and makes no token', async () => {
    expect((await s.api('POST', 'sys/auth/userpass', { type: 'userpass' })).status).toBe(204);
    expect((await s.api('POST', 'auth/userpass/users/alice', { password: 'pw-alice', token_ttl: '1h' })).status).toBe(204);
    expect((await s.api('POST', 'sys/quotas/lease-count/logins', { path: 'auth/userpass/login/*', max_leases: 2 })).status).toBe(204);
    const login = () => s.api('POST', 'auth/userpass/login/alice', { password: 'pw-alice' }, { token: null });
    expect((await login()).status).toBe(200);
    expect((await login()).status).toBe(200);
    const before = await accessors();
    expect((await login()).status).toBe(429);
    expect(await accessors()).toBe(before);
    expect(await counter('logins')).toBe(2);
  });

  it('counts the logins of one approle role: the 4th is a 429 with no token, another role is not limited, the count survives a restart', async () => {
    expect((await s.api('POST', 'sys/auth/approle', { type: 'approle' })).status).toBe(204);
    const creds: Record<string, { role_id: string; secret_id: string }> = {};
    for (const role of ['a', 'b']) {
      expect((await s.api('POST', `auth/approle/role/${role}`, { token_ttl: '1h', token_policies: ['default'] })).status).toBe(204);
      const roleId = (await s.api('GET', `auth/approle/role/${role}/role-id`)).body.data.role_id as string;
      const secretId = (await s.api('POST', `auth/approle/role/${role}/secret-id`, {})).body.data.secret_id as string;
      creds[role] = { role_id: roleId, secret_id: secretId };
    }
    const login = (role: string) => s.api('POST', 'auth/approle/login', creds[role], { token: null });
    expect((await s.api('POST', 'sys/quotas/lease-count/role-a', { path: 'auth/approle', role: 'a', max_leases: 3 })).status).toBe(204);
    expect((await s.api('GET', 'sys/quotas/lease-count/role-a')).body.data).toMatchObject({ role: 'a', max_leases: 3, counter: 0 });
    const tokensOfA: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await login('a');
      expect(r.status).toBe(200);
      tokensOfA.push(r.body.auth.client_token);
    }
    const before = await accessors();
    const refused = await login('a');
    expect(refused.status).toBe(429);
    expect(refused.body.errors[0]).toMatch(/lease count quota exceeded/);
    expect(await accessors()).toBe(before);
    // Role b's logins are not under role a's rule.
    for (let i = 0; i < 4; i++) expect((await login('b')).status).toBe(200);
    expect(await counter('role-a')).toBe(3);

    // Rebuilt at unseal from the role each lease was counted under: role b's tokens stay out.
    await s.stop();
    s = await restartUnsealed(s);
    // A login waits for the restore; the counter read does not, so it comes after.
    expect((await login('a')).status).toBe(429);
    expect((await login('b')).status).toBe(200);
    expect(await counter('role-a')).toBe(3);
    // A renewal keeps the lease under its role.
    expect((await s.api('POST', 'auth/token/renew', { token: tokensOfA[1] })).status).toBe(200);
    expect(await counter('role-a')).toBe(3);
    // Revoking one frees one place.
    expect((await s.api('POST', 'auth/token/revoke', { token: tokensOfA[0] })).status).toBe(204);
    expect(await counter('role-a')).toBe(2);
    expect((await login('a')).status).toBe(200);
    expect((await login('a')).status).toBe(429);
    expect(await counter('role-a')).toBe(3);
    // The renewed lease kept its role in storage: a second restart counts it again.
    await s.stop();
    s = await restartUnsealed(s);
    expect((await login('a')).status).toBe(429);
    expect(await counter('role-a')).toBe(3);
  });

  it('makes a response-wrapping token take its own place first: a wrapped answer never passes the quota', async () => {
    const wrap = { headers: { 'X-Vault-Wrap-TTL': '10m' } };
    const create = (o?: typeof wrap) => s.api('POST', 'auth/token/create-orphan', { ttl: '1h', policies: ['default'] }, o);
    expect((await s.api('POST', 'sys/quotas/lease-count/wrapped', { path: 'auth/token/create-orphan', max_leases: 2 })).status).toBe(204);
    // A wrapped token creation is two leases: the token and its wrapping token.
    const w = await create(wrap);
    expect(w.status).toBe(200);
    expect(w.body.wrap_info.token).toEqual(expect.any(String));
    expect(await counter('wrapped')).toBe(2);
    // Unwrapping spends the wrapping token: one place back.
    const unwrapped = await s.api('POST', 'sys/wrapping/unwrap', {}, { token: w.body.wrap_info.token });
    expect(unwrapped.status).toBe(200);
    expect(await counter('wrapped')).toBe(1);
    // One place left: a wrapped creation needs two, so it is refused before anything is made.
    const before = await accessors();
    const refused = await create(wrap);
    expect(refused.status).toBe(429);
    expect(await accessors()).toBe(before);
    expect(await counter('wrapped')).toBe(1);
    // Unwrapped, it fits.
    expect((await create()).status).toBe(200);
    expect(await counter('wrapped')).toBe(2);
    expect((await create(wrap)).status).toBe(429);
    expect(await counter('wrapped')).toBe(2);
  });

  it('makes sys/wrapping/wrap take a place first', async () => {
    expect((await s.api('POST', 'sys/quotas/lease-count/wrap-endpoint', { path: 'sys/wrapping/wrap', max_leases: 1 })).status).toBe(204);
    const wrap = () => s.api('POST', 'sys/wrapping/wrap', { k: 'v' }, { headers: { 'X-Vault-Wrap-TTL': '10m' } });
    expect((await wrap()).status).toBe(200);
    expect(await counter('wrap-endpoint')).toBe(1);
    const refused = await wrap();
    expect(refused.status).toBe(429);
    expect(await counter('wrap-endpoint')).toBe(1);
  });
});
