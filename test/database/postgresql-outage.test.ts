/**
 * A database that goes down during revocation: the lease stays pending while
 * the server is stopped and is revoked by the expiration manager's retries
 * once it is back. Twice at once: the built-in plugin, whose driver sees its
 * server go away inside the database engine's process, and the same plugin
 * registered as an external version, in a process of its own; neither process
 * may die of it. The server stopped here is a dedicated PostgreSQL of this
 * file alone (test/helpers/databases.ts), never the shared one other test
 * files use at the same time.
 */
import { resolve } from 'node:path';
import { Client } from 'pg';
import { dedicatedDatabase, withCredentials, type DedicatedDatabase } from '../helpers/databases';
import { externalPlugin } from '../helpers/plugins';
import { descendantPids, sleep, waitFor } from '../helpers/processes';
import { scratchDir, startDevServer, type RunningServer } from '../helpers/server';

jest.setTimeout(90_000);

const PG_PLUGIN_MAIN = resolve(__dirname, '../../plugins/database-postgresql/dist/main.js');

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
  const pluginDir = scratchDir('sr-pgdown-plugins-');
  s = await startDevServer({ dataDir: scratchDir('sr-pgdown-'), extraArgs: [`-dev-plugin-dir=${pluginDir}`] });
  expect((await s.api('POST', 'sys/mounts/database', { type: 'database' })).status).toBe(204);
  // The same plugin registered as an external version: its driver lives in a process of its own.
  const ext = externalPlugin(pluginDir, 'pg-ext', PG_PLUGIN_MAIN);
  expect((await s.api('POST', 'sys/plugins/catalog/database/postgresql-database-plugin', { command: ext.command, sha256: ext.sha256, version: 'v2.0.0' })).status).toBe(204);
  for (const [name, version] of [['pg', ''], ['pg-ext', 'v2.0.0']] as const) {
    const conn = await s.api('POST', `database/config/${name}`, {
      plugin_name: 'postgresql-database-plugin',
      plugin_version: version,
      connection_url: `postgresql://{{username}}:{{password}}@${u.host}${u.pathname}`,
      username: decodeURIComponent(u.username),
      password: decodeURIComponent(u.password),
      allowed_roles: '*',
    });
    expect([conn.status, conn.text]).toEqual([204, '']);
    const role = await s.api('POST', `database/roles/${name}`, {
      db_name: name,
      creation_statements: [`CREATE ROLE "{{name}}" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}'`],
      revocation_statements: [`DROP ROLE IF EXISTS "{{name}}"`],
      default_ttl: '5m',
    });
    expect(role.status).toBe(204);
  }
});

afterAll(async () => {
  await s?.stop();
  pg?.drop();
});

it('a database that is down during revocation leaves the leases pending, of the built-in and of an external version; they are revoked once it is back', async () => {
  const issued = await Promise.all(['pg', 'pg-ext'].map((role) => s.api('GET', `database/creds/${role}`)));
  for (const r of issued) {
    expect(r.status).toBe(200);
    expect(await canLogin(r.body.data.username, r.body.data.password)).toBe(true);
  }
  const engine = descendantPids(s.proc.pid!, 'plugins/database/dist/plugin.js');
  expect(engine).toHaveLength(1);
  const external = descendantPids(s.proc.pid!, 'pg-ext/');
  expect(external).toHaveLength(1);
  pg.stop();
  try {
    for (const r of issued) expect((await s.api('POST', 'sys/leases/revoke', { lease_id: r.body.lease_id })).status).toBe(204);
    // The queued revocations fail against the stopped server; the leases stay.
    await sleep(2_000);
    for (const r of issued) expect(await leaseExists(r.body.lease_id)).toBe(true);
  } finally {
    pg.start();
  }
  // The expiration manager retries (10 s base, with jitter) and the revocations go through.
  for (const r of issued) {
    await waitFor('the lease to be revoked', async () => !(await leaseExists(r.body.lease_id)), 45_000);
    expect((await s.api('POST', 'sys/leases/lookup', { lease_id: r.body.lease_id })).status).toBe(400);
    expect(await canLogin(r.body.data.username, r.body.data.password)).toBe(false);
    expect(await superQuery('SELECT 1 FROM pg_roles WHERE rolname = $1', [r.body.data.username])).toHaveLength(0);
  }
  // The same processes did all of it: the outage crashed neither the engine (the built-in's driver) nor the external plugin.
  expect(descendantPids(s.proc.pid!, 'plugins/database/dist/plugin.js')).toEqual(engine);
  expect(descendantPids(s.proc.pid!, 'pg-ext/')).toEqual(external);
});
