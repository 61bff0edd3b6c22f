/**
 * Database plugins as catalog entries and processes, through the real binary
 * and the real database engine, with the SDK's in-memory database plugin
 * (sdk-plugin/src/database/fixtures) standing in for a database so the
 * runtime itself is what is tested: two registered versions pinned by two
 * connections serve at once in two processes; a crashed plugin process is
 * restarted and its connections re-initialized without the caller noticing;
 * unregistered versions and unknown plugins are 400s naming the field.
 * PostgreSQL and MySQL themselves: postgresql.test.ts, mysql.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { externalPlugin } from '../helpers/plugins';
import { scratchDir, startDevServer, type RunningServer } from '../helpers/server';

jest.setTimeout(60_000);

const FIXTURE = resolve(__dirname, '../../sdk-plugin/dist/database/fixtures/memory-db-plugin.js');
let s: RunningServer;
let pluginDir: string;

/** Pids of running fixture processes started for `tag` (the script passes it as an argument). */
function pidsOf(tag: string): number[] {
  const out = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((l) => l.includes(`memory-${tag}/`) && l.trim().endsWith(` ${tag}`))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
}

async function register(version: string): Promise<void> {
  // The fixture bundled into one file of its own per version; the version is its argument.
  const { command, sha256 } = externalPlugin(pluginDir, `memory-${version}`, FIXTURE);
  const r = await s.api('POST', 'sys/plugins/catalog/database/memory-database-plugin', { command, args: [version], sha256, version });
  expect(r.status).toBe(204);
}

async function waitFor(what: string, cond: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  pluginDir = scratchDir('sr-dbplugins-');
  s = await startDevServer({ extraArgs: [`-dev-plugin-dir=${pluginDir}`] });
  expect((await s.api('POST', 'sys/mounts/database', { type: 'database' })).status).toBe(204);
  await register('v1.0.0');
  await register('v2.0.0');
});
afterAll(async () => {
  await s.stop();
});

describe('database plugin runtime', () => {
  it('refuses an unregistered version and an unknown plugin with a 400 naming the field', async () => {
    const v9 = await s.api('POST', 'database/config/x', { plugin_name: 'memory-database-plugin', plugin_version: '9.9.9' });
    expect(v9.status).toBe(400);
    expect(v9.body.errors[0]).toMatch(/^plugin_version: /);
    const bad = await s.api('POST', 'database/config/x', { plugin_name: 'memory-database-plugin', plugin_version: 'latest' });
    expect([bad.status, bad.body.errors[0]]).toEqual([400, expect.stringMatching(/^plugin_version: /)]);
    const unknown = await s.api('POST', 'database/config/x', { plugin_name: 'no-such-database-plugin' });
    expect([unknown.status, unknown.body.errors[0]]).toEqual([400, expect.stringMatching(/^plugin_name: /)]);
    // Two versions registered and none built in: an unpinned connection must choose.
    const ambiguous = await s.api('POST', 'database/config/x', { plugin_name: 'memory-database-plugin' });
    expect([ambiguous.status, ambiguous.body.errors[0]]).toEqual([400, expect.stringMatching(/^plugin_version: /)]);
    expect((await s.api('GET', 'database/config/x')).status).toBe(404);
  });

  it('pins two connections to two versions, both serving at once in their own processes', async () => {
    expect((await s.api('POST', 'database/config/one', { plugin_name: 'memory-database-plugin', plugin_version: 'v1.0.0', prefix: 'one', allowed_roles: '*' })).status).toBe(204);
    expect((await s.api('POST', 'database/config/two', { plugin_name: 'memory-database-plugin', plugin_version: '2.0.0', prefix: 'two', allowed_roles: '*' })).status).toBe(204);
    expect((await s.api('GET', 'database/config/one')).body.data.plugin_version).toBe('v1.0.0');
    expect((await s.api('GET', 'database/config/two')).body.data.plugin_version).toBe('v2.0.0');
    await s.api('POST', 'database/roles/r1', { db_name: 'one', creation_statements: 'create' });
    await s.api('POST', 'database/roles/r2', { db_name: 'two', creation_statements: 'create' });
    const [a, b] = await Promise.all([s.api('GET', 'database/creds/r1'), s.api('GET', 'database/creds/r2')]);
    expect(a.body.data.username).toMatch(/^one-r1-/);
    expect(b.body.data.username).toMatch(/^two-r2-/);
    const [p1, p2] = [pidsOf('v1.0.0'), pidsOf('v2.0.0')];
    expect(p1).toHaveLength(1);
    expect(p2).toHaveLength(1);
    expect(p1[0]).not.toBe(p2[0]);
  });

  it('a crashed plugin process is restarted and its connections re-initialized; the other version is untouched', async () => {
    const [before] = pidsOf('v1.0.0');
    const [other] = pidsOf('v2.0.0');
    process.kill(before!, 'SIGKILL');
    await waitFor('the v1 process to go', () => !pidsOf('v1.0.0').includes(before!));
    const r = await s.api('GET', 'database/creds/r1');
    expect(r.status).toBe(200);
    expect(r.body.data.username).toMatch(/^one-r1-/);
    // The lease issued by the new process revokes through it.
    expect((await s.api('POST', 'sys/leases/revoke', { lease_id: r.body.lease_id, sync: true })).status).toBe(204);
    const after = pidsOf('v1.0.0');
    expect(after).toHaveLength(1);
    expect(after[0]).not.toBe(before);
    expect(pidsOf('v2.0.0')).toEqual([other]);
    expect((await s.api('GET', 'database/creds/r2')).status).toBe(200);
  });

  it('no database plugin process outlives the server', async () => {
    const pids = [...pidsOf('v1.0.0'), ...pidsOf('v2.0.0')];
    expect(pids.length).toBe(2);
    await s.stop();
    await waitFor('plugin processes to exit', () => pidsOf('v1.0.0').length + pidsOf('v2.0.0').length === 0);
  });
});
