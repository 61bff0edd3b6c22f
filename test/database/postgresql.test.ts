/**
 * The database engine end to end on a real PostgreSQL: the real binary, the
 * database engine process and postgresql-database-plugin (the built-in, inside
 * the engine; a pinned external version in its own process). Issued users log in
 * and stop logging in once revoked; renewal moves VALID UNTIL; static
 * passwords rotate (the new one logs in, the old one does not); rotate-root
 * takes the old root password away. The test makes its own superuser for the
 * connection, so the machine's own root is never rotated. A server going
 * down during revocation is postgresql-outage.test.ts (a dedicated server).
 */
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { Client } from 'pg';
import { postgresUrl } from '../helpers/databases';
import { subscribeSse } from '../helpers/events';
import { externalPlugin } from '../helpers/plugins';
import { descendantPids } from '../helpers/processes';
import { scratchDir, startDevServer, type RunningServer } from '../helpers/server';

jest.setTimeout(90_000);

let s: RunningServer;
let superUrl: URL;
const pluginDir = scratchDir('sr-pgplugins-');
const serverArgs = [`-dev-plugin-dir=${pluginDir}`];
const PG_PLUGIN_MAIN = resolve(__dirname, '../../plugins/database-postgresql/dist/main.js');
const tag = randomBytes(4).toString('hex');
const ADMIN = `sr_admin_${tag}`;
const ADMIN_PW = `Adm-${randomBytes(12).toString('hex')}`;
const STATIC_USER = `sr_static_${tag}`;
const LONG_USER = `sr_long_${tag}`;
const SHORT_USER = `sr_short_${tag}`;
const CREATE = [`CREATE ROLE "{{name}}" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}'`];
const REVOKE = [`DROP ROLE IF EXISTS "{{name}}"`];

const urlFor = (user: string, password: string) => {
  const u = new URL(superUrl.href);
  u.username = encodeURIComponent(user);
  u.password = encodeURIComponent(password);
  return u.href;
};

/** Runs one query as the given user; rejects when the login fails. */
async function as<T = Record<string, unknown>>(user: string, password: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const c = new Client({ connectionString: urlFor(user, password), connectionTimeoutMillis: 5000 });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows as T[];
  } finally {
    await c.end();
  }
}
const superQuery = (sql: string, params: unknown[] = []) => as(decodeURIComponent(superUrl.username), decodeURIComponent(superUrl.password), sql, params);
const canLogin = (user: string, password: string) => as(user, password, 'SELECT current_user AS u').then((r) => r[0]?.u === user, () => false);
const roleExists = async (name: string) => (await superQuery('SELECT 1 FROM pg_roles WHERE rolname = $1', [name])).length === 1;

beforeAll(async () => {
  superUrl = new URL(await postgresUrl());
  await superQuery(`CREATE ROLE "${ADMIN}" WITH LOGIN SUPERUSER PASSWORD '${ADMIN_PW}'`);
  for (const u of [STATIC_USER, LONG_USER, SHORT_USER]) await superQuery(`CREATE ROLE "${u}" WITH LOGIN PASSWORD 'initial-${tag}'`);
  s = await startDevServer({ dataDir: scratchDir('sr-pg-'), extraArgs: serverArgs });
  expect((await s.api('POST', 'sys/mounts/database', { type: 'database' })).status).toBe(204);
  const conn = await s.api('POST', 'database/config/pg', {
    plugin_name: 'postgresql-database-plugin',
    connection_url: `postgresql://{{username}}:{{password}}@${superUrl.host}${superUrl.pathname}`,
    username: ADMIN,
    password: ADMIN_PW,
    allowed_roles: ['app', 'svc', 'pinned'],
    root_rotation_statements: [`ALTER ROLE "{{name}}" WITH PASSWORD '{{password}}'`],
  });
  expect([conn.status, conn.text]).toEqual([204, '']);
});

afterAll(async () => {
  await s?.stop();
  const users = (await superQuery(`SELECT rolname FROM pg_roles WHERE rolname = ANY($1) OR rolname LIKE 'v-%app%'`, [[ADMIN, STATIC_USER, LONG_USER, SHORT_USER]])) as Array<{ rolname: string }>;
  for (const u of users) await superQuery(`DROP ROLE IF EXISTS "${u.rolname}"`);
});

describe('database engine on PostgreSQL', () => {
  it('reads a connection back without its password', async () => {
    const r = await s.api('GET', 'database/config/pg');
    expect(r.body.data).toMatchObject({ plugin_name: 'postgresql-database-plugin', allowed_roles: ['app', 'svc', 'pinned'], connection_details: { username: ADMIN } });
    expect(r.text).not.toContain(ADMIN_PW);
  });

  it('issues users that log in, renews them (VALID UNTIL moves) and revokes them (login fails, role gone)', async () => {
    expect((await s.api('POST', 'database/roles/app', { db_name: 'pg', creation_statements: CREATE, revocation_statements: REVOKE, default_ttl: '5m', max_ttl: '1h' })).status).toBe(204);
    const issued = await s.api('GET', 'database/creds/app');
    expect(issued.status).toBe(200);
    expect(issued.body).toMatchObject({ renewable: true, lease_duration: 300 });
    const { username, password } = issued.body.data as { username: string; password: string };
    expect(await canLogin(username, password)).toBe(true);
    expect(await canLogin(username, `${password}x`)).toBe(false);

    const validUntil = async () => new Date(((await superQuery('SELECT rolvaliduntil FROM pg_roles WHERE rolname = $1', [username])) as Array<{ rolvaliduntil: Date }>)[0]!.rolvaliduntil).getTime();
    const before = await validUntil();
    expect(Math.abs(before - (Date.now() + 300_000))).toBeLessThan(30_000);
    const renewed = await s.api('POST', 'sys/leases/renew', { lease_id: issued.body.lease_id, increment: 1800 });
    expect([renewed.status, renewed.body.lease_duration]).toEqual([200, 1800]);
    expect(Math.abs((await validUntil()) - (Date.now() + 1_800_000))).toBeLessThan(30_000);

    expect((await s.api('POST', 'sys/leases/revoke', { lease_id: issued.body.lease_id, sync: true })).status).toBe(204);
    expect(await canLogin(username, password)).toBe(false);
    expect(await roleExists(username)).toBe(false);
  });

  it("a role without TTLs takes the mount's, and a tune shows on the next credential", async () => {
    expect((await s.api('POST', 'database/roles/svc', { db_name: 'pg', creation_statements: CREATE, revocation_statements: REVOKE })).status).toBe(204);
    const leases: string[] = [];
    for (const [ttl, max] of [['10m', '15m'], ['20m', '30m']] as const) {
      expect((await s.api('POST', 'sys/mounts/database/tune', { default_lease_ttl: ttl, max_lease_ttl: max })).status).toBe(204);
      const issued = await s.api('GET', 'database/creds/svc');
      expect(issued.status).toBe(200);
      leases.push(issued.body.lease_id);
      expect(issued.body.lease_duration).toBe(ttl === '10m' ? 600 : 1200);
    }
    expect((await s.api('POST', 'sys/mounts/database/tune', { default_lease_ttl: 0, max_lease_ttl: 0 })).status).toBe(204);
    for (const id of leases) expect((await s.api('POST', 'sys/leases/revoke', { lease_id: id, sync: true })).status).toBe(204);
  });

  it('refuses a role the connection does not allow', async () => {
    await s.api('POST', 'database/roles/other', { db_name: 'pg', creation_statements: CREATE });
    const r = await s.api('GET', 'database/creds/other');
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/not allowed/);
  });

  it('rotates a static password at creation, when due and on demand; each new password logs in and the old one does not', async () => {
    const events = await subscribeSse(s.url, 'database/static-rotate', { token: s.rootToken });
    const created = await s.api('POST', 'database/static-roles/svc', { db_name: 'pg', username: STATIC_USER, rotation_period: '5s' });
    expect([created.status, created.text]).toEqual([204, '']);
    expect(await canLogin(STATIC_USER, `initial-${tag}`)).toBe(false);
    const first = (await s.api('GET', 'database/static-creds/svc')).body.data;
    expect(first).toMatchObject({ username: STATIC_USER, rotation_period: 5 });
    expect(first.ttl).toBeGreaterThanOrEqual(3);
    expect(first.ttl).toBeLessThanOrEqual(5);
    expect(await canLogin(STATIC_USER, first.password)).toBe(true);

    // Due after 5 s: the engine's timer rotates it without being asked.
    const deadline = Date.now() + 15_000;
    let second = first;
    while (second.password === first.password && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      second = (await s.api('GET', 'database/static-creds/svc')).body.data;
    }
    expect(second.password).not.toBe(first.password);
    expect(Date.parse(second.last_service_rotation)).toBeGreaterThan(Date.parse(first.last_service_rotation));
    expect(await canLogin(STATIC_USER, second.password)).toBe(true);
    expect(await canLogin(STATIC_USER, first.password)).toBe(false);

    expect((await s.api('POST', 'database/rotate-role/svc', {})).status).toBe(204);
    const third = (await s.api('GET', 'database/static-creds/svc')).body.data;
    expect(third.password).not.toBe(second.password);
    expect(await canLogin(STATIC_USER, third.password)).toBe(true);
    // Each rotation (at creation, when due, on demand) is a change event, without the password.
    await events.waitForEvent((e) => events.events().length >= 3 && e.path === 'database/static-creds/svc', 'three static-rotate events');
    expect(events.events().slice(0, 3)).toEqual(Array(3).fill(expect.objectContaining({ event_type: 'database/static-rotate', mount: 'database/', path: 'database/static-creds/svc', metadata: { role: 'svc' } })));
    expect(JSON.stringify(events.frames)).not.toContain(third.password);
    events.close();

    // Deleting the role leaves the user in the database (a long period first, so no rotation races the delete).
    expect((await s.api('POST', 'database/static-roles/svc', { rotation_period: '1h' })).status).toBe(204);
    expect((await s.api('DELETE', 'database/static-roles/svc')).status).toBe(204);
    expect(await roleExists(STATIC_USER)).toBe(true);
    expect(await canLogin(STATIC_USER, third.password)).toBe(true);
    expect((await s.api('GET', 'database/static-creds/svc')).status).toBe(404);
  });

  it('rotate-root: the old root password stops working, the new one is never returned, and credentials still issue', async () => {
    expect(await canLogin(ADMIN, ADMIN_PW)).toBe(true);
    const r = await s.api('POST', 'database/rotate-root/pg', {});
    expect([r.status, r.text]).toEqual([204, '']);
    expect(await canLogin(ADMIN, ADMIN_PW)).toBe(false);
    const read = await s.api('GET', 'database/config/pg');
    expect(read.text).not.toMatch(/"password"/);
    const issued = await s.api('GET', 'database/creds/app');
    expect(issued.status).toBe(200);
    expect(await canLogin(issued.body.data.username, issued.body.data.password)).toBe(true);
    expect((await s.api('POST', 'sys/leases/revoke', { lease_id: issued.body.lease_id, sync: true })).status).toBe(204);
  });

  it('static rotations survive a restart: what came due while the core was down rotates at start, the rest is left alone', async () => {
    await s.api('POST', 'database/config/pg', { allowed_roles: ['app', 'svc', 'pinned', 'long', 'short'] });
    expect((await s.api('POST', 'database/static-roles/long', { db_name: 'pg', username: LONG_USER, rotation_period: '1h' })).status).toBe(204);
    expect((await s.api('POST', 'database/static-roles/short', { db_name: 'pg', username: SHORT_USER, rotation_period: '8s' })).status).toBe(204);
    const long = (await s.api('GET', 'database/static-creds/long')).body.data;
    const short = (await s.api('GET', 'database/static-creds/short')).body.data;
    await s.stop();
    // Down past the short role's due time.
    await new Promise((r) => setTimeout(r, 9_000));
    const downAt = Date.now();
    s = await startDevServer({ dataDir: s.dataDir, extraArgs: serverArgs });

    const deadline = Date.now() + 15_000;
    let shortNow = short;
    while (shortNow.password === short.password && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 300));
      const r = await s.api('GET', 'database/static-creds/short');
      if (r.status === 200) shortNow = r.body.data;
    }
    expect(shortNow.password).not.toBe(short.password);
    expect(Date.parse(shortNow.last_service_rotation)).toBeGreaterThanOrEqual(downAt - 1000);
    expect(await canLogin(SHORT_USER, shortNow.password)).toBe(true);

    const longNow = (await s.api('GET', 'database/static-creds/long')).body.data;
    expect(longNow.password).toBe(long.password);
    expect(longNow.last_service_rotation).toBe(long.last_service_rotation);
    expect(longNow.ttl).toBeGreaterThan(3500);
    expect(await canLogin(LONG_USER, long.password)).toBe(true);
  });

  it('pins a connection to a second registered version of the plugin (its own process) while another keeps the built-in (in the engine); both serve at once', async () => {
    // The "second version": an entry in plugin_directory that runs the built plugin, registered by its sha256.
    const { command, sha256 } = externalPlugin(pluginDir, 'postgresql-database-plugin-v2', PG_PLUGIN_MAIN);
    expect((await s.api('POST', 'sys/plugins/catalog/database/postgresql-database-plugin', { command, args: ['pinned-v2'], sha256, version: 'v2.0.0' })).status).toBe(204);
    const versions = (await s.api('GET', 'sys/plugins/catalog')).body.data.detailed.filter((p: { name: string }) => p.name === 'postgresql-database-plugin').map((p: { version: string }) => p.version);
    expect(versions.sort()).toEqual(['v0.1.0+builtin', 'v2.0.0']);

    const pinned = await s.api('POST', 'database/config/pinned', {
      plugin_name: 'postgresql-database-plugin',
      plugin_version: 'v2.0.0',
      connection_url: `postgresql://{{username}}:{{password}}@${superUrl.host}${superUrl.pathname}`,
      username: decodeURIComponent(superUrl.username),
      password: decodeURIComponent(superUrl.password),
      allowed_roles: 'pinned',
    });
    expect([pinned.status, pinned.text]).toEqual([204, '']);
    expect((await s.api('GET', 'database/config/pinned')).body.data.plugin_version).toBe('v2.0.0');
    expect((await s.api('POST', 'database/roles/pinned', { db_name: 'pinned', creation_statements: CREATE, revocation_statements: REVOKE })).status).toBe(204);

    const [a, b] = await Promise.all([s.api('GET', 'database/creds/app'), s.api('GET', 'database/creds/pinned')]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(await canLogin(a.body.data.username, a.body.data.password)).toBe(true);
    expect(await canLogin(b.body.data.username, b.body.data.password)).toBe(true);
    // One plugin process, the pinned v2 (marked by its argument): the built-in runs inside the database engine.
    expect(descendantPids(s.proc.pid!, 'postgresql-database-plugin-v2/main.js pinned-v2')).toHaveLength(1);
    expect(descendantPids(s.proc.pid!, 'plugins/database-postgresql/')).toEqual([]);
    for (const r of [a, b]) expect((await s.api('POST', 'sys/leases/revoke', { lease_id: r.body.lease_id, sync: true })).status).toBe(204);
  });
});
