/**
 * A database that goes down during revocation: the lease stays pending while
 * the server is stopped and is revoked by the expiration manager's retries
 * once it is back. The built-in plugin's driver sees its server go away inside
 * the database engine's process: the engine must live through it. The server
 * stopped here is a dedicated PostgreSQL of this file alone
 * (test/helpers/databases.ts), never the shared one other test files use at
 * the same time.
 */
import { Client } from 'pg';
import { dedicatedDatabase, withCredentials, type DedicatedDatabase } from '../helpers/databases';
import { descendantPids, sleep, waitFor } from '../helpers/processes';
import { scratchDir, startDevServer, type RunningServer } from '../helpers/server';

jest.setTimeout(90_000);

let pg: DedicatedDatabase;
let s: RunningServer;

async function superQuery(sql: string, params: unknown[] = []): Promise<unknown[]> {
  const c = new Client({ connectionString: pg.url, connectionTimeoutMillis: 5000 });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows;
  } finally {
    await c.end();
  }
}
async function canLogin(user: string, password: string): Promise<boolean> {
  const c = new Client({ connectionString: withCredentials(pg.url, user, password), connectionTimeoutMillis: 5000 });
  try {
    await c.connect();
    await c.end();
    return true;
  } catch {
    return false;
  }
}
const leaseExists = async (leaseId: string) => (await s.api('POST', 'sys/leases/lookup', { lease_id: leaseId })).status === 200;

beforeAll(async () => {
  pg = dedicatedDatabase('postgres');
  const u = new URL(pg.url);
  s = await startDevServer({ dataDir: scratchDir('sr-pgdown-') });
  expect((await s.api('POST', 'sys/mounts/database', { type: 'database' })).status).toBe(204);
  const conn = await s.api('POST', 'database/config/pg', {
    plugin_name: 'postgresql-database-plugin',
    connection_url: `postgresql://{{username}}:{{password}}@${u.host}${u.pathname}`,
    username: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    allowed_roles: 'app',
  });
  expect([conn.status, conn.text]).toEqual([204, '']);
  const role = await s.api('POST', 'database/roles/app', {
    db_name: 'pg',
    creation_statements: [`CREATE ROLE "{{name}}" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}'`],
    revocation_statements: [`DROP ROLE IF EXISTS "{{name}}"`],
    default_ttl: '5m',
  });
  expect(role.status).toBe(204);
});

afterAll(async () => {
  await s?.stop();
  pg?.drop();
});

it('a database that is down during revocation leaves the lease pending; it is revoked once the database is back', async () => {
  const issued = await s.api('GET', 'database/creds/app');
  expect(issued.status).toBe(200);
  const { username, password } = issued.body.data as { username: string; password: string };
  expect(await canLogin(username, password)).toBe(true);
  const engine = descendantPids(s.proc.pid!, 'plugins/database/dist/plugin.js');
  expect(engine).toHaveLength(1);
  pg.stop();
  try {
    expect((await s.api('POST', 'sys/leases/revoke', { lease_id: issued.body.lease_id })).status).toBe(204);
    // The queued revocation fails against the stopped server; the lease stays.
    await sleep(2_000);
    expect(await leaseExists(issued.body.lease_id)).toBe(true);
  } finally {
    pg.start();
  }
  // The expiration manager retries (10 s base, with jitter) and the revocation goes through.
  await waitFor('the lease to be revoked', async () => !(await leaseExists(issued.body.lease_id)), 45_000);
  expect((await s.api('POST', 'sys/leases/lookup', { lease_id: issued.body.lease_id })).status).toBe(400);
  expect(await canLogin(username, password)).toBe(false);
  expect(await superQuery('SELECT 1 FROM pg_roles WHERE rolname = $1', [username])).toHaveLength(0);
  // The same engine process did all of it: the outage crashed nothing.
  expect(descendantPids(s.proc.pid!, 'plugins/database/dist/plugin.js')).toEqual(engine);
});
