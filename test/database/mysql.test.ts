/**
 * The database engine end to end on a real MySQL/MariaDB: the real binary,
 * the database engine process and mysql-database-plugin. Issued users log in
 * until revoked; renewal runs the role's renew statements with the new
 * expiration; a static password rotates and the new one logs in; rotate-root
 * takes the old admin password away. The connection uses an admin account the
 * test creates, so the server's own root is never rotated.
 */
import { randomBytes } from 'node:crypto';
import { createConnection } from 'mysql2/promise';
import { mysqlUrl, withCredentials } from '../helpers/databases';
import { scratchDir, startDevServer, type RunningServer } from '../helpers/server';

jest.setTimeout(90_000);

let s: RunningServer;
let rootUrl: URL;
const tag = randomBytes(4).toString('hex');
const ADMIN = `sr_admin_${tag}`;
const ADMIN_PW = `Adm-${randomBytes(12).toString('hex')}`;
const STATIC_USER = `sr_static_${tag}`;
// Renew statements write here, so the test sees that they ran and with which expiration.
const RENEWALS = `sr_${tag}.renewals`;
const CREATE = ["CREATE USER '{{name}}'@'%' IDENTIFIED BY '{{password}}'", "GRANT SELECT ON *.* TO '{{name}}'@'%'"];
const REVOKE = ["DROP USER IF EXISTS '{{name}}'@'%'"];

/** Logs in with mysql2 and returns the account the server authenticated, or the error code. */
async function login(user: string, password: string): Promise<string> {
  try {
    const c = await createConnection({ uri: withCredentials(rootUrl.href, user, password), connectTimeout: 5000 });
    try {
      const [rows] = await c.query('SELECT CURRENT_USER() AS u');
      return String((rows as Array<{ u: string }>)[0]!.u).split('@')[0]!;
    } finally {
      await c.end().catch(() => undefined);
    }
  } catch (err) {
    return `failed: ${(err as { code?: string }).code ?? String(err)}`;
  }
}
const canLogin = async (user: string, password: string) => (await login(user, password)) === user;

async function rootQuery<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
  const c = await createConnection({ uri: rootUrl.href });
  try {
    const [rows] = await c.query(sql, params);
    return rows as T[];
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  rootUrl = new URL(mysqlUrl());
  await rootQuery(`CREATE USER ?@'%' IDENTIFIED BY ?`, [ADMIN, ADMIN_PW]);
  await rootQuery(`GRANT ALL PRIVILEGES ON *.* TO ?@'%' WITH GRANT OPTION`, [ADMIN]);
  await rootQuery(`CREATE USER ?@'%' IDENTIFIED BY ?`, [STATIC_USER, `initial-${tag}`]);
  await rootQuery(`CREATE DATABASE sr_${tag}`);
  await rootQuery(`CREATE TABLE ${RENEWALS} (name VARCHAR(80) NOT NULL, expiration VARCHAR(40) NOT NULL)`);
  s = await startDevServer({ dataDir: scratchDir('sr-my-') });
  expect((await s.api('POST', 'sys/mounts/database', { type: 'database' })).status).toBe(204);
  const conn = await s.api('POST', 'database/config/my', {
    plugin_name: 'mysql-database-plugin',
    // The Go driver's DSN, as Vault documents it for this plugin.
    connection_url: `{{username}}:{{password}}@tcp(${rootUrl.host})/`,
    username: ADMIN,
    password: ADMIN_PW,
    allowed_roles: '*',
  });
  expect([conn.status, conn.text]).toEqual([204, '']);
});

afterAll(async () => {
  await s?.stop();
  const users = await rootQuery<{ User: string }>(`SELECT User FROM mysql.user WHERE User IN (?, ?) OR User LIKE 'v-%app%'`, [ADMIN, STATIC_USER]);
  for (const u of users) await rootQuery(`DROP USER IF EXISTS ?@'%'`, [u.User]);
  await rootQuery(`DROP DATABASE IF EXISTS sr_${tag}`);
});

describe('database engine on MySQL/MariaDB', () => {
  it('reads the connection back without its password', async () => {
    const r = await s.api('GET', 'database/config/my');
    expect(r.body.data).toMatchObject({ plugin_name: 'mysql-database-plugin', connection_details: { username: ADMIN } });
    expect(r.text).not.toContain(ADMIN_PW);
  });

  it('issues users that log in, renews them (renew statements run with the new expiration) and revokes them (login fails, user gone)', async () => {
    expect(
      (
        await s.api('POST', 'database/roles/app', {
          db_name: 'my',
          creation_statements: CREATE,
          revocation_statements: REVOKE,
          renew_statements: [`INSERT INTO ${RENEWALS} VALUES ('{{name}}', '{{expiration}}')`],
          default_ttl: '5m',
          max_ttl: '1h',
        })
      ).status,
    ).toBe(204);
    const issued = await s.api('GET', 'database/creds/app');
    expect(issued.status).toBe(200);
    expect(issued.body).toMatchObject({ renewable: true, lease_duration: 300 });
    const { username, password } = issued.body.data as { username: string; password: string };
    expect(await login(username, password)).toBe(username);
    expect(await canLogin(username, `${password}x`)).toBe(false);

    const renewed = await s.api('POST', 'sys/leases/renew', { lease_id: issued.body.lease_id, increment: 1800 });
    expect([renewed.status, renewed.body.lease_duration]).toEqual([200, 1800]);
    const rows = await rootQuery<{ expiration: string }>(`SELECT expiration FROM ${RENEWALS} WHERE name = ?`, [username]);
    expect(rows).toHaveLength(1);
    // "2006-01-02 15:04:05-0700" (Vault's layout) of now + the increment.
    const expiration = Date.parse(rows[0]!.expiration.replace(' ', 'T').replace(/([+-]\d\d)(\d\d)$/, '$1:$2'));
    expect(Math.abs(expiration - (Date.now() + 1_800_000))).toBeLessThan(30_000);
    expect(await login(username, password)).toBe(username);

    expect((await s.api('POST', 'sys/leases/revoke', { lease_id: issued.body.lease_id, sync: true })).status).toBe(204);
    expect(await canLogin(username, password)).toBe(false);
    expect(await rootQuery('SELECT 1 FROM mysql.user WHERE User = ?', [username])).toHaveLength(0);
  });

  it('rotates a static password at creation and on demand; the new one logs in, the old one does not', async () => {
    expect((await s.api('POST', 'database/static-roles/svc', { db_name: 'my', username: STATIC_USER, rotation_period: '1h' })).status).toBe(204);
    const first = (await s.api('GET', 'database/static-creds/svc')).body.data;
    expect(first).toMatchObject({ username: STATIC_USER, rotation_period: 3600 });
    expect(await canLogin(STATIC_USER, `initial-${tag}`)).toBe(false);
    expect(await login(STATIC_USER, first.password)).toBe(STATIC_USER);
    expect((await s.api('POST', 'database/rotate-role/svc', {})).status).toBe(204);
    const second = (await s.api('GET', 'database/static-creds/svc')).body.data;
    expect(second.password).not.toBe(first.password);
    expect(Date.parse(second.last_service_rotation)).toBeGreaterThanOrEqual(Date.parse(first.last_service_rotation));
    expect(await login(STATIC_USER, second.password)).toBe(STATIC_USER);
    expect(await canLogin(STATIC_USER, first.password)).toBe(false);
  });

  it('rotate-root: the old admin password stops working, the new one is never returned, and credentials still issue', async () => {
    expect(await login(ADMIN, ADMIN_PW)).toBe(ADMIN);
    const r = await s.api('POST', 'database/rotate-root/my', {});
    expect([r.status, r.text]).toEqual([204, '']);
    expect(await canLogin(ADMIN, ADMIN_PW)).toBe(false);
    const read = await s.api('GET', 'database/config/my');
    expect(read.status).toBe(200);
    expect(read.text).not.toMatch(/"password"/);
    // The engine now logs in with the rotated password: issue, log in, revoke.
    const issued = await s.api('GET', 'database/creds/app');
    expect(issued.status).toBe(200);
    expect(await login(issued.body.data.username, issued.body.data.password)).toBe(issued.body.data.username);
    expect((await s.api('POST', 'sys/leases/revoke', { lease_id: issued.body.lease_id, sync: true })).status).toBe(204);
    expect(await canLogin(issued.body.data.username, issued.body.data.password)).toBe(false);
  });
});
