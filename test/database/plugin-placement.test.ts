/**
 * Where a database plugin runs (DESIGN §3, "Built-in database plugins"): the
 * built-in postgresql and mysql plugins inside the database engine's process,
 * with no process of their own; a version registered in the catalog as its
 * own sandboxed process, its sha256 checked before it starts, restarted after
 * a crash. Through the real binary, against the real PostgreSQL and MariaDB.
 * The runtime of external versions (two at once, crashes, unknown versions)
 * is plugin-runtime.test.ts.
 */
import { appendFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { Client } from 'pg';
import { mysqlUrl, postgresUrl, withCredentials } from '../helpers/databases';
import { externalPlugin } from '../helpers/plugins';
import { alive, descendantPids, waitFor } from '../helpers/processes';
import { scratchDir, startDevServer, type RunningServer } from '../helpers/server';

jest.setTimeout(90_000);

const PG_PLUGIN_MAIN = resolve(__dirname, '../../plugins/database-postgresql/dist/main.js');
const ENGINE = 'plugins/database/dist/plugin.js';
const PG_CREATE = [`CREATE ROLE "{{name}}" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}'`];
const PG_REVOKE = [`DROP ROLE IF EXISTS "{{name}}"`];
const MY_CREATE = ["CREATE USER '{{name}}'@'%' IDENTIFIED BY '{{password}}'"];
const MY_REVOKE = ["DROP USER IF EXISTS '{{name}}'@'%'"];

let s: RunningServer;
let pluginDir: string;
let engine: number;
let pg: URL;
let my: URL;

const pgConnection = (over: Record<string, unknown> = {}) => ({
  plugin_name: 'postgresql-database-plugin',
  connection_url: `postgresql://{{username}}:{{password}}@${pg.host}${pg.pathname}`,
  username: decodeURIComponent(pg.username),
  password: decodeURIComponent(pg.password),
  allowed_roles: '*',
  ...over,
});

async function pgLogin(user: string, password: string): Promise<boolean> {
  const c = new Client({ connectionString: withCredentials(pg.href, user, password), connectionTimeoutMillis: 5000 });
  try {
    await c.connect();
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => undefined);
  }
}

async function myLogin(user: string, password: string): Promise<boolean> {
  try {
    const c = await createConnection({ uri: withCredentials(my.href, user, password), connectTimeout: 5000 });
    await c.end();
    return true;
  } catch {
    return false;
  }
}

/** Issues a credential of `role`, checks that it logs in, and revokes it. */
async function issueAndRevoke(role: string, login: (u: string, p: string) => Promise<boolean>): Promise<void> {
  const r = await s.api('GET', `database/creds/${role}`);
  expect([r.status, r.text]).toEqual([200, expect.any(String)]);
  expect(await login(r.body.data.username, r.body.data.password)).toBe(true);
  expect((await s.api('POST', 'sys/leases/revoke', { lease_id: r.body.lease_id, sync: true })).status).toBe(204);
}

beforeAll(async () => {
  pg = new URL(postgresUrl());
  my = new URL(mysqlUrl());
  pluginDir = scratchDir('sr-dbplace-');
  s = await startDevServer({ extraArgs: [`-dev-plugin-dir=${pluginDir}`] });
  expect((await s.api('POST', 'sys/mounts/database', { type: 'database' })).status).toBe(204);
  const engines = await waitFor('the database engine process', () => {
    const pids = descendantPids(s.proc.pid!, ENGINE);
    return pids.length === 1 && pids;
  });
  engine = engines[0]!;
});
afterAll(async () => {
  await s?.stop();
});

describe('database plugin placement', () => {
  it('runs the built-in postgresql and mysql plugins inside the engine: no process of their own, the connection names the built-in', async () => {
    expect((await s.api('POST', 'database/config/pg', pgConnection())).status).toBe(204);
    const myConn = await s.api('POST', 'database/config/my', {
      plugin_name: 'mysql-database-plugin',
      connection_url: `{{username}}:{{password}}@tcp(${my.host})/`,
      username: decodeURIComponent(my.username),
      password: decodeURIComponent(my.password),
      allowed_roles: '*',
    });
    expect([myConn.status, myConn.text]).toEqual([204, '']);
    expect((await s.api('POST', 'database/roles/pg-app', { db_name: 'pg', creation_statements: PG_CREATE, revocation_statements: PG_REVOKE })).status).toBe(204);
    expect((await s.api('POST', 'database/roles/my-app', { db_name: 'my', creation_statements: MY_CREATE, revocation_statements: MY_REVOKE })).status).toBe(204);
    await issueAndRevoke('pg-app', pgLogin);
    await issueAndRevoke('my-app', myLogin);

    for (const name of ['pg', 'my']) {
      expect((await s.api('GET', `database/config/${name}`)).body.data).toMatchObject({ plugin_version: '', running_plugin_version: 'v0.1.0+builtin' });
    }
    // The built-in catalog entries are still listed; only no process serves them.
    const catalog = (await s.api('GET', 'sys/plugins/catalog')).body.data.detailed as Array<Record<string, unknown>>;
    expect(catalog).toEqual(
      expect.arrayContaining(
        ['postgresql-database-plugin', 'mysql-database-plugin'].map((name) => expect.objectContaining({ type: 'database', name, version: 'v0.1.0+builtin', builtin: true })),
      ),
    );
    expect(descendantPids(s.proc.pid!, 'database-postgresql')).toEqual([]);
    expect(descendantPids(s.proc.pid!, 'database-mysql')).toEqual([]);
    // Nothing below the engine either, and it is the same process it was before the connections.
    expect(descendantPids(engine, '')).toEqual([]);
    expect(descendantPids(s.proc.pid!, ENGINE)).toEqual([engine]);
  });

  it('a driver that fails inside the built-in is an error reply; the engine keeps serving', async () => {
    // pg reads sslrootcert while it builds its client: the read throws inside the driver (the sandbox lets the engine read its bundle alone).
    const bad = await s.api(
      'POST',
      'database/config/broken',
      pgConnection({ connection_url: `postgresql://{{username}}:{{password}}@${pg.host}${pg.pathname}?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem` }),
    );
    expect(bad.status).toBeGreaterThanOrEqual(400);
    expect(bad.text).not.toContain(decodeURIComponent(pg.password));
    expect(alive(engine)).toBe(true);
    expect(descendantPids(s.proc.pid!, ENGINE)).toEqual([engine]);
    await issueAndRevoke('pg-app', pgLogin);
  });

  it('runs a registered external version as its own process, sha256-checked before it starts, restarted after a crash', async () => {
    const ext = externalPlugin(pluginDir, 'pg-ext', PG_PLUGIN_MAIN);
    const register = (sha256: string) =>
      s.api('POST', 'sys/plugins/catalog/database/postgresql-database-plugin', { command: ext.command, args: ['pinned-ext'], sha256, version: 'v2.0.0' });
    const wrong = await register('0'.repeat(64));
    expect([wrong.status, wrong.body.errors?.[0]]).toEqual([400, expect.stringMatching(/^sha256: /)]);
    expect((await register(ext.sha256)).status).toBe(204);

    // The file changed after registration: its sha256 no longer matches, so it never starts.
    const file = join(pluginDir, ext.command);
    appendFileSync(file, '\n// tampered\n');
    const refused = await s.api('POST', 'database/config/ext', pgConnection({ plugin_version: 'v2.0.0' }));
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.text).toMatch(/sha256/);
    expect(descendantPids(s.proc.pid!, 'pg-ext/')).toEqual([]);

    // The registered file back: the pinned connection runs in a process of its own, outside the engine.
    externalPlugin(pluginDir, 'pg-ext', PG_PLUGIN_MAIN);
    const pinned = await s.api('POST', 'database/config/ext', pgConnection({ plugin_version: 'v2.0.0' }));
    expect([pinned.status, pinned.text]).toEqual([204, '']);
    expect((await s.api('GET', 'database/config/ext')).body.data).toMatchObject({ plugin_version: 'v2.0.0', running_plugin_version: 'v2.0.0' });
    expect((await s.api('POST', 'database/roles/ext-app', { db_name: 'ext', creation_statements: PG_CREATE, revocation_statements: PG_REVOKE })).status).toBe(204);
    await issueAndRevoke('ext-app', pgLogin);
    const [first, ...more] = descendantPids(s.proc.pid!, 'pg-ext/');
    expect(first).toBeDefined();
    expect(more).toEqual([]);
    expect(descendantPids(engine, 'pg-ext/')).toEqual([]);

    // A crash of the external process is its own: it is restarted, the engine and the built-in stay.
    process.kill(first!, 'SIGKILL');
    await waitFor('the external plugin to go', () => !alive(first!));
    await issueAndRevoke('ext-app', pgLogin);
    const after = descendantPids(s.proc.pid!, 'pg-ext/');
    expect(after).toHaveLength(1);
    expect(after[0]).not.toBe(first);
    expect(descendantPids(s.proc.pid!, ENGINE)).toEqual([engine]);
    await issueAndRevoke('pg-app', pgLogin);
  });
});
