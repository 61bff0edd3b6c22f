/**
 * Issue 26, finding 7, on the real PostgreSQL: the default revocation works
 * for a connection whose administrator is a CREATEROLE user, not a superuser
 * (as managed PostgreSQL services require); and a namespace whose leases
 * cannot be revoked is not deleted (its leases are named, and kept).
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { postgresUrl, withCredentials } from '../helpers/databases';
import { startDevServer, type RunningServer } from '../helpers/server';

jest.setTimeout(120_000);

let s: RunningServer;
let superUrl: URL;
const tag = randomBytes(4).toString('hex');
const ADMIN = `sr_cr_admin_${tag}`;
const ADMIN_PW = `Adm-${randomBytes(12).toString('hex')}`;
const SCHEMA = `sr_cr_${tag}`;
const CREATE = [
  `CREATE ROLE "{{name}}" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}'`,
  `GRANT USAGE, CREATE ON SCHEMA ${SCHEMA} TO "{{name}}"`,
  `GRANT SELECT ON ALL TABLES IN SCHEMA ${SCHEMA} TO "{{name}}"`,
];

async function query<T = Record<string, unknown>>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const c = new Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows as T[];
  } finally {
    await c.end();
  }
}
const superQuery = (sql: string, params: unknown[] = []) => query(superUrl.href, sql, params);
const roleExists = async (name: string) => (await superQuery('SELECT 1 FROM pg_roles WHERE rolname = $1', [name])).length === 1;
const nsHeader = (path: string) => ({ headers: { 'X-Service-Namespace': path } });

async function connection(path: string, opts: { headers?: Record<string, string> } = {}) {
  const r = await s.api('POST', path, {
    plugin_name: 'postgresql-database-plugin',
    connection_url: `postgresql://{{username}}:{{password}}@${superUrl.host}${superUrl.pathname}`,
    username: ADMIN,
    password: ADMIN_PW,
    allowed_roles: ['*'],
  }, opts);
  expect([r.status, r.text]).toEqual([204, '']);
}

beforeAll(async () => {
  superUrl = new URL(postgresUrl());
  // The administrator of the connection: CREATEROLE, no superuser; it owns the schema the users get.
  await superQuery(`CREATE ROLE "${ADMIN}" WITH LOGIN CREATEROLE PASSWORD '${ADMIN_PW}'`);
  await superQuery(`CREATE SCHEMA ${SCHEMA} AUTHORIZATION "${ADMIN}"`);
  await query(withCredentials(superUrl.href, ADMIN, ADMIN_PW), `CREATE TABLE ${SCHEMA}.data (x int)`);
  s = await startDevServer();
  expect((await s.api('POST', 'sys/mounts/database', { type: 'database' })).status).toBe(204);
  await connection('database/config/pg');
  expect((await s.api('POST', 'database/roles/app', { db_name: 'pg', creation_statements: CREATE, default_ttl: 600 })).status).toBe(204);
});

afterAll(async () => {
  await s?.stop('SIGKILL');
  const users = (await superQuery(`SELECT rolname FROM pg_roles r WHERE pg_has_role($1, r.oid, 'USAGE') AND rolname <> $1 AND NOT rolsuper`, [ADMIN])) as Array<{ rolname: string }>;
  await superQuery(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  for (const u of users) await superQuery(`DROP OWNED BY "${u.rolname}"`).then(() => superQuery(`DROP ROLE IF EXISTS "${u.rolname}"`), () => undefined);
  await superQuery(`DROP ROLE IF EXISTS "${ADMIN}"`);
});

it('revokes a user with the default statements when the administrator is CREATEROLE, not superuser', async () => {
  expect((await superQuery('SELECT rolsuper, rolcreaterole FROM pg_roles WHERE rolname = $1', [ADMIN]))[0]).toEqual({ rolsuper: false, rolcreaterole: true });
  const creds = await s.api('GET', 'database/creds/app');
  expect(creds.status).toBe(200);
  const { username, password } = creds.body.data as { username: string; password: string };
  const userUrl = withCredentials(superUrl.href, username, password);
  // The user owns an object and holds a session open: both used to keep the role alive.
  await query(userUrl, `CREATE TABLE ${SCHEMA}.owned_by_user (y int)`);
  const session = new Client({ connectionString: userUrl });
  await session.connect();
  const ended = new Promise<string>((resolve) => session.on('error', (e) => resolve(e.message)));
  try {
    const r = await s.api('PUT', 'sys/leases/revoke', { lease_id: creds.body.lease_id, sync: true });
    expect([r.status, r.text]).toEqual([204, '']);
    expect(await roleExists(username)).toBe(false);
    // Its session was ended and what it owned went to the administrator.
    expect(await ended).toMatch(/terminat/);
    expect(await superQuery('SELECT tableowner FROM pg_tables WHERE schemaname = $1 AND tablename = $2', [SCHEMA, 'owned_by_user'])).toEqual([{ tableowner: ADMIN }]);
    expect((await s.api('GET', 'sys/leases/lookup/database/creds/app/?list=true')).status).toBe(404);
  } finally {
    await session.end().catch(() => undefined);
  }
});

it('refuses to delete a namespace while its leases cannot be revoked, names them, and keeps them', async () => {
  expect((await s.api('POST', 'sys/namespaces/tenant')).status).toBe(200);
  const t = nsHeader('tenant');
  expect((await s.api('POST', 'sys/mounts/database', { type: 'database' }, t)).status).toBe(204);
  await connection('database/config/pg', t);
  // Revocation statements the database refuses: the lease cannot be revoked.
  const broken = { db_name: 'pg', creation_statements: CREATE.slice(0, 1), revocation_statements: [`DROP ROLE "missing_{{name}}"`], default_ttl: 600 };
  expect((await s.api('POST', 'database/roles/stuck', broken, t)).status).toBe(204);
  const creds = await s.api('GET', 'database/creds/stuck', undefined, t);
  expect(creds.status).toBe(200);
  const username = creds.body.data.username as string;
  const leaseId = creds.body.lease_id as string;

  const refused = await s.api('DELETE', 'sys/namespaces/tenant');
  expect(refused.status).toBe(400);
  expect(refused.body.errors.join(' ')).toContain(leaseId.split('/').pop());
  // Nothing was forgotten: the namespace, its lease and the database user are all still there.
  expect((await s.api('GET', 'sys/namespaces/tenant')).status).toBe(200);
  expect((await s.api('PUT', 'sys/leases/lookup', { lease_id: leaseId }, t)).status).toBe(200);
  expect(await roleExists(username)).toBe(true);

  // Once the role revokes again, the deletion goes through and the user goes with it.
  expect((await s.api('POST', 'database/roles/stuck', { ...broken, revocation_statements: [] }, t)).status).toBe(204);
  const deleted = await s.api('DELETE', 'sys/namespaces/tenant');
  expect([deleted.status, deleted.body.data?.status]).toEqual([200, 'in-progress']);
  expect(await roleExists(username)).toBe(false);
});
