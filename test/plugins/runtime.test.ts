/**
 * The plugin runtime end to end: kv runs as a child process of the real
 * binary; a crash of that process must fail in-flight requests fast (never
 * hang), be restarted, and lose no acknowledged write. External plugins are
 * sha256-checked, versioned, run from the one file the sha256 covers (code
 * beside it is never loaded), and no plugin process outlives the server.
 */
import { appendFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { externalPlugin, sha256Of } from '../helpers/plugins';
import { alive, descendantPids, pidsOf, sleep, waitFor } from '../helpers/processes';
import { scratchDir, startDevServer, type RunningServer } from '../helpers/server';

// The e2e project's testTimeout is not applied per project by jest 30; these tests start real processes.
jest.setTimeout(60_000);

const KV_MAIN = resolve(__dirname, '../../plugins/kv/dist/main.js');
/** What a kv plugin process has in its args. */
const KV_PLUGIN = 'plugins/kv/dist/plugin.js';





let s: RunningServer;
let pluginDir: string;
beforeAll(async () => {
  pluginDir = scratchDir('sr-plugins-');
  s = await startDevServer({ extraArgs: [`-dev-plugin-dir=${pluginDir}`] });
});
afterAll(async () => {
  await s.stop('SIGKILL');
});

/** kv as an external plugin in its own directory `<name>/` of the plugin directory: its command and sha256. */
function externalKv(name: string): { command: string; sha256: string } {
  return externalPlugin(pluginDir, name, KV_MAIN);
}

describe('plugin runtime', () => {
  it('round-trips kv v1 and v2 through the plugin process', async () => {
    expect((await s.api('POST', 'sys/mounts/v1kv', { type: 'kv', options: { version: '1' } })).status).toBe(204);
    expect((await s.api('POST', 'v1kv/a', { x: 'one' })).status).toBe(204);
    expect((await s.api('GET', 'v1kv/a')).body.data).toEqual({ x: 'one' });
    expect((await s.api('POST', 'sys/mounts/v2kv', { type: 'kv', options: { version: '2' } })).status).toBe(204);
    // kv v2 finishes its upgrade asynchronously in Vault; allow a short settle.
    const w = await waitFor('kv v2 write', async () => {
      const r = await s.api('POST', 'v2kv/data/a', { data: { x: 'two' } });
      return r.status === 200 ? r : undefined;
    });
    expect(w.body.data.version).toBe(1);
    const r = await s.api('GET', 'v2kv/data/a');
    expect(r.body.data.data).toEqual({ x: 'two' });
    expect(r.body.data.metadata.version).toBe(1);
    expect(pidsOf(KV_PLUGIN, s.proc.pid!).length).toBeGreaterThan(0);
  });

  it('survives a SIGKILL of the kv process with 50 requests in flight', async () => {
    const acked = new Map<string, string>();
    for (let i = 0; i < 20; i++) {
      const r = await s.api('POST', `v1kv/before-${i}`, { v: `b${i}` });
      expect(r.status).toBe(204);
      acked.set(`before-${i}`, `b${i}`);
    }
    const [pid] = pidsOf(KV_PLUGIN, s.proc.pid!);
    expect(pid).toBeDefined();
    const inflight = Array.from({ length: 50 }, (_, i) =>
      s.api('POST', `v1kv/during-${i}`, { v: `d${i}` }).then((r) => ({ i, ...r })),
    );
    await sleep(5);
    process.kill(pid!, 'SIGKILL');
    // Each in-flight request must settle (the jest timeout catches a hang).
    const results = await Promise.all(inflight);
    if (process.env.SR_E2E_DEBUG) console.log(results.map((r) => `${r.status} ${r.text}`).join('\n'));
    for (const r of results) {
      if (r.status >= 200 && r.status < 300) {
        acked.set(`during-${r.i}`, `d${r.i}`);
      } else {
        expect(r.status).toBeGreaterThanOrEqual(500);
        expect(r.body.errors.join(' ')).toMatch(/kv/);
      }
    }
    expect((await s.api('GET', 'sys/health', undefined, { token: null })).status).toBe(200);
    await waitFor('kv restart', async () => ((await s.api('GET', 'v1kv/a')).status === 200 ? true : undefined), 10_000);
    const newPids = pidsOf(KV_PLUGIN, s.proc.pid!);
    expect(newPids).not.toContain(pid);
    for (const [k, v] of acked) expect((await s.api('GET', `v1kv/${k}`)).body?.data).toEqual({ v });
    expect((await s.api('POST', 'v1kv/after', { v: 'ok' })).status).toBe(204);
  });

  it('serves an external kv v1.2.3 beside the built-in one', async () => {
    const { command, sha256 } = externalKv('kv-ext');
    const reg = await s.api('POST', 'sys/plugins/catalog/secret/kv', { command, sha256, version: 'v1.2.3' });
    expect(reg.status).toBe(204);
    const m = await s.api('POST', 'sys/mounts/ext', { type: 'kv', plugin_version: 'v1.2.3', options: { version: '1' } });
    expect(m.status).toBe(204);
    const ext = await s.api('GET', 'sys/mounts/ext');
    expect(ext.body.data).toMatchObject({ type: 'kv', running_plugin_version: 'v1.2.3' });
    const builtin = await s.api('GET', 'sys/mounts/v1kv');
    expect(builtin.body.data.running_plugin_version).toMatch(/\+builtin$/);
    const both = await Promise.all([s.api('POST', 'ext/k', { who: 'ext' }), s.api('POST', 'v1kv/k', { who: 'builtin' })]);
    expect(both.map((r) => r.status)).toEqual([204, 204]);
    expect((await s.api('GET', 'ext/k')).body.data).toEqual({ who: 'ext' });
    expect((await s.api('GET', 'v1kv/k')).body.data).toEqual({ who: 'builtin' });
    // The external one is a separate process, started from its own directory.
    expect(descendantPids(s.proc.pid!, KV_PLUGIN).length).toBeGreaterThanOrEqual(1);
    expect(descendantPids(s.proc.pid!, 'kv-ext/main.js')).toHaveLength(1);
  });

  it('refuses a plugin whose sha256 does not match with a 400 naming sha256', async () => {
    const { command } = externalKv('kv-bad');
    const reg = await s.api('POST', 'sys/plugins/catalog/secret/kv', { command, sha256: 'ab'.repeat(32), version: 'v9.9.9' });
    expect(reg.status).toBe(400);
    expect(reg.body.errors.join(' ')).toMatch(/sha256/i);
    const m = await s.api('POST', 'sys/mounts/bad', { type: 'kv', plugin_version: 'v9.9.9' });
    expect(m.status).toBe(400);
    expect((await s.api('GET', 'bad/x')).status).toBe(404);
  });

  it('refuses to mount a plugin whose file changed after registration', async () => {
    const { command, sha256 } = externalKv('kv-swap');
    expect((await s.api('POST', 'sys/plugins/catalog/secret/kv', { command, sha256, version: 'v2.0.0' })).status).toBe(204);
    appendFileSync(join(pluginDir, command), '\nconsole.error("tampered");\n');
    const m = await s.api('POST', 'sys/mounts/swapped', { type: 'kv', plugin_version: 'v2.0.0' });
    expect(m.status).toBe(400);
    expect(m.body.errors.join(' ')).toMatch(/sha256/i);
    expect((await s.api('GET', 'swapped/x')).status).toBe(404);
  });

  it('refuses to run code beside the registered file: a main.js that requires a changed lib.js never runs it (issue 26, finding 5)', async () => {
    // Finding 5's layout: main.js, registered by its sha256, loads ./lib.js (the whole kv), changed after registration.
    const { dir } = externalKv('kv-split');
    writeFileSync(join(dir, 'lib.js'), `require('./main.js');\nconsole.error('a changed lib.js ran');\n`);
    writeFileSync(join(dir, 'split.js'), "require('./lib.js');\n");
    const reg = await s.api('POST', 'sys/plugins/catalog/secret/kv', { command: 'kv-split/split.js', sha256: sha256Of(join(dir, 'split.js')), version: 'v5.0.0' });
    expect(reg.status).toBe(204);
    const m = await s.api('POST', 'sys/mounts/split', { type: 'kv', plugin_version: 'v5.0.0' });
    expect(m.status).toBe(400);
    expect(m.body.errors.join(' ')).toContain(`the sandbox refused to let it read ${realpathSync(dir)}/lib.js. A plugin may read only its own file, which the sha256 covers`);
    expect((await s.api('GET', 'split/x')).status).toBe(404);
    // The sha256 is still checked before every start: a tampered registered file is refused before the sandbox is reached.
    appendFileSync(join(dir, 'split.js'), '// changed\n');
    const again = await s.api('POST', 'sys/mounts/split', { type: 'kv', plugin_version: 'v5.0.0' });
    expect(again.body.errors.join(' ')).toMatch(/sha256/);
  });

  it('restarts kv on sys/plugins/reload/backend and keeps serving', async () => {
    const before = pidsOf(KV_PLUGIN, s.proc.pid!);
    expect(before.length).toBeGreaterThan(0);
    const r = await s.api('POST', 'sys/plugins/reload/backend', { plugin: 'kv' });
    expect(r.status).toBe(200);
    expect(typeof r.body.data.reload_id).toBe('string');
    const got = await waitFor('kv after reload', async () => {
      const g = await s.api('GET', 'v1kv/k');
      return g.status === 200 ? g : undefined;
    });
    expect(got.body.data).toEqual({ who: 'builtin' });
    const after = pidsOf(KV_PLUGIN, s.proc.pid!);
    expect(after.length).toBeGreaterThan(0);
    for (const p of after) expect(before).not.toContain(p);
    expect((await s.api('POST', 'v1kv/k2', { v: 1 })).status).toBe(204);
  });

  it('leaves no plugin process behind on SIGTERM of the server', async () => {
    const plugins = descendantPids(s.proc.pid!, KV_PLUGIN);
    expect(plugins.length).toBeGreaterThan(0);
    await s.stop('SIGTERM');
    await waitFor('plugin processes to exit', async () => (plugins.every((p) => !alive(p)) ? true : undefined), 10_000);
  });
});
