/**
 * The degraded state of a plugin, end to end: a plugin that keeps crashing
 * within the supervisor's window (5 crashes in 60 s, the defaults) makes its
 * mount answer a 503 naming the plugin, while the core and every other mount
 * keep serving; sys/plugins/reload/backend brings it back with its data.
 *
 * The crashing plugin is an external copy of kv bundled behind a prelude that
 * exits at once while a marker file exists in its run directory (its HOME,
 * kept across restarts; the sandbox lets it read nothing else but its own
 * file), so after one SIGKILL every restart fails.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { externalPlugin } from '../helpers/plugins';
import { pidsOf, sleep } from '../helpers/processes';
import { startDevServer, type RunningServer } from '../helpers/server';

jest.setTimeout(60_000);

const KV_MAIN = resolve(__dirname, '../../plugins/kv/dist/main.js');
/** An argument only the flaky copy gets (kv ignores its argv), to tell its process apart in `ps`. */
const FLAKY_ARG = '--sr-test-flaky';

const flakyPids = () => pidsOf([FLAKY_ARG, 'kv-flaky/']);

let s: RunningServer;
let pluginDir: string;
let marker: string;

beforeAll(async () => {
  pluginDir = mkdtempSync(join(tmpdir(), 'sr-degraded-'));
  const flaky = externalPlugin(pluginDir, 'kv-flaky', KV_MAIN, {
    prelude: `if (require('node:fs').existsSync(require('node:path').join(process.env.HOME, 'broken'))) { process.stderr.write('flaky: refusing to start\\n'); process.exit(3); }`,
  });
  s = await startDevServer({ extraArgs: [`-dev-plugin-dir=${pluginDir}`] });
  const reg = await s.api('POST', 'sys/plugins/catalog/secret/kv', { command: flaky.command, args: [FLAKY_ARG], sha256: flaky.sha256, version: 'v0.0.1-flaky' });
  expect(reg.status).toBe(204);
});
afterAll(async () => {
  await s?.stop('SIGKILL');
  rmSync(pluginDir, { recursive: true, force: true });
});

describe('a plugin that crashes repeatedly', () => {
  it('is degraded with a 503 naming it, leaves the core and other mounts up, and comes back on reload', async () => {
    expect((await s.api('POST', 'sys/mounts/flaky', { type: 'kv', plugin_version: 'v0.0.1-flaky', options: { version: '1' } })).status).toBe(204);
    expect((await s.api('POST', 'flaky/a', { v: 'kept' })).status).toBe(204);
    const [pid] = flakyPids();
    expect(pid).toBeDefined();
    const home = /(?:^|\0)HOME=([^\0]*)/.exec(readFileSync(`/proc/${pid}/environ`, 'utf8'))![1]!;
    marker = join(home, 'broken');

    // From now on every restart exits at once: the SIGKILL plus four failed restarts reach the threshold.
    writeFileSync(marker, '');
    process.kill(pid!, 'SIGKILL');

    const deadline = Date.now() + 30_000;
    let r = await s.api('GET', 'flaky/a');
    while (r.status !== 503 && Date.now() < deadline) {
      await sleep(200);
      r = await s.api('GET', 'flaky/a');
    }
    expect(r.status).toBe(503);
    const message = r.body.errors.join(' ');
    expect(message).toContain('kv v0.0.1-flaky');
    expect(message).toMatch(/degraded/);
    expect(message).toContain('sys/plugins/reload/backend');
    expect(flakyPids()).toEqual([]);

    // Stays degraded (no more restarts), and writes are refused the same way.
    await sleep(500);
    const w = await s.api('POST', 'flaky/b', { v: 'x' });
    expect(w.status).toBe(503);
    expect(w.body.errors.join(' ')).toContain('kv v0.0.1-flaky');

    // The core and the built-in kv at secret/ are unaffected.
    expect((await s.api('GET', 'sys/health', undefined, { token: null })).status).toBe(200);
    expect((await s.api('POST', 'secret/data/still-up', { data: { ok: 'yes' } })).status).toBe(200);
    expect((await s.api('GET', 'secret/data/still-up')).body.data.data).toEqual({ ok: 'yes' });

    // Fixed and reloaded: it serves again with what it stored before the crashes.
    rmSync(marker);
    const reload = await s.api('POST', 'sys/plugins/reload/backend', { mounts: ['flaky/'] });
    expect(reload.status).toBe(200);
    const back = await s.api('GET', 'flaky/a');
    expect(back.status).toBe(200);
    expect(back.body.data).toEqual({ v: 'kept' });
    expect((await s.api('POST', 'flaky/b', { v: 'after' })).status).toBe(204);
    expect(flakyPids().length).toBe(1);
  });
});
