/**
 * Zero-downtime plugin upgrades through the real binary and real plugin
 * processes (issue 33): the built kv and transit bundles are registered under
 * two versions each, and while 8 clients write and read kv v2 secrets and
 * encrypt and decrypt with transit without pause, the mounts are switched
 * between the versions ten times (sys/mounts/:path/tune plugin_version), then
 * reloaded (sys/plugins/reload/backend, by mount and by plugin, and after a
 * version is re-registered with a new sha256). No request may fail, every
 * acknowledged write must read back, and the old process must have exited
 * once each switch answers. New versions that cannot serve (one exits during
 * start-up, one fails Describe, one crashes during Setup) are refused with the
 * reason while the old process keeps serving, the mount entry unchanged. An
 * auth method switches the same way (sys/auth/:path/tune) while logins go on.
 */
import { resolve } from 'node:path';
import { cliRunner } from '../helpers/cli';
import { externalPlugin, type ExternalPlugin } from '../helpers/plugins';
import { alive, descendantPids, waitFor } from '../helpers/processes';
import { scratchDir, startDevServer, type RunningServer } from '../helpers/server';

// Real processes on a loaded machine: generous, never a timed assertion.
jest.setTimeout(600_000);

const KV_MAIN = resolve(__dirname, '../../plugins/kv/dist/main.js');
const TRANSIT_MAIN = resolve(__dirname, '../../plugins/transit/dist/main.js');
const USERPASS_MAIN = resolve(__dirname, '../../plugins/userpass/dist/main.js');
const BROKEN_DESCRIBE_MAIN = resolve(__dirname, '../fixtures/broken-describe-plugin/main.js');

const CLIENTS = 8;
const SWITCHES = 10;

let s: RunningServer;
let pluginDir: string;
const bundles: Record<string, ExternalPlugin> = {};

async function register(name: 'kv' | 'transit' | 'userpass', version: string, bundle: ExternalPlugin, args: string[] = []): Promise<void> {
  const r = await s.api('POST', `sys/plugins/catalog/${name === 'userpass' ? 'auth' : 'secret'}/${name}`, { command: bundle.command, sha256: bundle.sha256, version, args });
  expect(r.status).toBe(204);
}

/** The pids of the plugin processes started from `dir` (a bundle's own directory in the plugin directory). */
const pidsFrom = (dir: string) => descendantPids(s.proc.pid!, `/${dir}/`);

beforeAll(async () => {
  pluginDir = scratchDir('sr-upgrade-');
  bundles.kvA = externalPlugin(pluginDir, 'kv-a', KV_MAIN);
  bundles.kvB = externalPlugin(pluginDir, 'kv-b', KV_MAIN);
  bundles.trA = externalPlugin(pluginDir, 'transit-a', TRANSIT_MAIN);
  bundles.trB = externalPlugin(pluginDir, 'transit-b', TRANSIT_MAIN);
  // The same kv, rebuilt (another sha256), for the re-registration.
  bundles.kvA2 = externalPlugin(pluginDir, 'kv-a2', KV_MAIN, { prelude: '/* rebuilt */' });
  bundles.exits = externalPlugin(pluginDir, 'kv-exits', KV_MAIN, { prelude: `process.stderr.write('kv-exits: this build refuses to start\\n'); process.exit(3);` });
  bundles.noDescribe = externalPlugin(pluginDir, 'kv-nodescribe', BROKEN_DESCRIBE_MAIN);
  bundles.upA = externalPlugin(pluginDir, 'userpass-a', USERPASS_MAIN);
  bundles.upB = externalPlugin(pluginDir, 'userpass-b', USERPASS_MAIN);
  s = await startDevServer({ extraArgs: [`-dev-plugin-dir=${pluginDir}`] });
  await register('kv', 'v1.0.0', bundles.kvA!);
  await register('kv', 'v1.1.0', bundles.kvB!);
  await register('transit', 'v1.0.0', bundles.trA!);
  await register('transit', 'v1.1.0', bundles.trB!);
  expect((await s.api('POST', 'sys/mounts/up-kv', { type: 'kv', plugin_version: 'v1.0.0', options: { version: '2' } })).status).toBe(204);
  expect((await s.api('POST', 'sys/mounts/up-tr', { type: 'transit', plugin_version: 'v1.0.0' })).status).toBe(204);
  await waitFor('kv v2 ready', async () => ((await s.api('POST', 'up-kv/data/ready', { data: { ok: true } })).status === 200 ? true : undefined));
  expect((await s.api('POST', 'up-tr/keys/load', {})).status).toBeLessThan(300);
});
afterAll(async () => {
  await s?.stop('SIGKILL');
});

/**
 * 8 clients, each in a loop: write one of its own secrets, read it back (the value
 * just acknowledged, whichever process answers), read a secret another client
 * acknowledged, encrypt with transit and decrypt the result. Any answer but a
 * success is a failure.
 */
function startLoad() {
  let running = true;
  let ops = 0;
  const failures: string[] = [];
  const acked = new Map<string, string>();
  const waiters: Array<{ at: number; go: () => void }> = [];
  const count = () => {
    ops++;
    for (const w of [...waiters]) if (ops >= w.at) (waiters.splice(waiters.indexOf(w), 1), w.go());
  };
  const check = (what: string, r: { status: number; text: string }, ok: boolean) => {
    if (!ok) failures.push(`${what}: ${r.status} ${r.text.slice(0, 300)}`);
    count();
    return ok;
  };
  const client = async (c: number) => {
    for (let n = 0; running; n++) {
      const key = `c${c}/k${n % 10}`;
      const value = `c${c}-n${n}`;
      const w = await s.api('POST', `up-kv/data/${key}`, { data: { v: value } });
      if (check(`write ${key}`, w, w.status === 200)) acked.set(key, value);
      const own = await s.api('GET', `up-kv/data/${key}`);
      check(`read-back ${key}`, own, own.status === 200 && own.body?.data?.data?.v === value);
      const keys = [...acked.keys()];
      const other = keys[(n * 7 + c) % keys.length];
      if (other !== undefined) {
        const r = await s.api('GET', `up-kv/data/${other}`);
        check(`read ${other}`, r, r.status === 200);
      }
      const plaintext = Buffer.from(value).toString('base64');
      const e = await s.api('POST', 'up-tr/encrypt/load', { plaintext });
      if (check('encrypt', e, e.status === 200 && typeof e.body?.data?.ciphertext === 'string')) {
        const d = await s.api('POST', 'up-tr/decrypt/load', { ciphertext: e.body.data.ciphertext });
        check('decrypt', d, d.status === 200 && d.body?.data?.plaintext === plaintext);
      }
    }
  };
  const done = Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
  return {
    failures,
    /** Resolves once `more` further requests were answered: load between switches without a timed wait. */
    progress: (more: number) => new Promise<void>((go) => waiters.push({ at: ops + more, go })),
    async stop() {
      running = false;
      await done;
      return { ops, failures, acked };
    },
  };
}

async function expectAllReadable(acked: Map<string, string>) {
  for (const [key, value] of acked) {
    const r = await s.api('GET', `up-kv/data/${key}`);
    expect({ key, status: r.status, v: r.body?.data?.data?.v }).toEqual({ key, status: 200, v: value });
  }
}

const mountView = async (path: string) => (await s.api('GET', `sys/mounts/${path}`)).body.data as { plugin_version: string; running_plugin_version: string };

describe('switching a mount between plugin versions under load', () => {
  it(`switches kv and transit ${SWITCHES} times with ${CLIENTS} clients running: no failed request, every write readable, the old process gone each time`, async () => {
    const A = { version: 'v1.0.0', kv: 'kv-a', tr: 'transit-a' };
    const B = { version: 'v1.1.0', kv: 'kv-b', tr: 'transit-b' };
    const load = startLoad();
    for (let i = 0; i < SWITCHES; i++) {
      const [from, to] = i % 2 === 0 ? [A, B] : [B, A];
      const old = { kv: pidsFrom(from.kv), tr: pidsFrom(from.tr) };
      expect(old.kv).toHaveLength(1);
      expect(old.tr).toHaveLength(1);
      await load.progress(4 * CLIENTS);
      const [tk, tt] = await Promise.all([
        s.api('POST', 'sys/mounts/up-kv/tune', { plugin_version: to.version }),
        s.api('POST', 'sys/mounts/up-tr/tune', { plugin_version: to.version }),
      ]);
      expect([tk.status, tk.text, tt.status, tt.text]).toEqual([204, '', 204, '']);
      // Answered once the old process let go: it has exited, one new one serves.
      for (const pid of [...old.kv, ...old.tr]) expect(alive(pid)).toBe(false);
      expect(pidsFrom(from.kv)).toEqual([]);
      expect(pidsFrom(to.kv)).toHaveLength(1);
      expect(pidsFrom(to.tr)).toHaveLength(1);
      expect(await mountView('up-kv')).toMatchObject({ plugin_version: to.version, running_plugin_version: to.version });
      expect(await mountView('up-tr')).toMatchObject({ plugin_version: to.version, running_plugin_version: to.version });
    }
    await load.progress(4 * CLIENTS);
    const { ops, failures, acked } = await load.stop();
    expect(failures).toEqual([]);
    expect(ops).toBeGreaterThan(SWITCHES * 4 * CLIENTS);
    await expectAllReadable(acked);
  });

  it('reloads by mount and by plugin under load, with a reload_id whose status reports it', async () => {
    // The mounts run v1.0.0 after an even number of switches.
    const load = startLoad();
    for (const body of [{ mounts: ['up-kv/'] }, { plugin: 'transit', scope: 'global' }]) {
      const dir = 'mounts' in body ? 'kv-a' : 'transit-a';
      const [old] = pidsFrom(dir);
      expect(old).toBeDefined();
      await load.progress(4 * CLIENTS);
      const r = await s.api('POST', 'sys/plugins/reload/backend', body);
      expect(r.status).toBe(200);
      const id = r.body.data.reload_id as string;
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      const st = await s.api('GET', `sys/plugins/reload/backend/status?reload_id=${id}`);
      expect(st.status).toBe(200);
      expect(st.body.data.reload_id).toBe(id);
      const results = Object.values(st.body.data.results as Record<string, { timestamp: string; error: string }>);
      expect(results).toHaveLength(1);
      expect(results[0]!.error).toBe('');
      expect(Number.isNaN(Date.parse(results[0]!.timestamp))).toBe(false);
      expect(alive(old!)).toBe(false);
      const now = pidsFrom(dir);
      expect(now).toHaveLength(1);
      expect(now).not.toContain(old);
    }
    await load.progress(4 * CLIENTS);
    const { failures, acked } = await load.stop();
    expect(failures).toEqual([]);
    await expectAllReadable(acked);
    const unknown = await s.api('GET', 'sys/plugins/reload/backend/status?reload_id=nope');
    expect(unknown.status).toBe(404);
    const badScope = await s.api('POST', 'sys/plugins/reload/backend', { plugin: 'kv', scope: 'cluster' });
    expect(badScope.status).toBe(400);
    expect(badScope.body.errors.join(' ')).toMatch(/scope/);
  });

  it('picks up a version re-registered with a new sha256 on reload (through the CLI, with reload-status)', async () => {
    const load = startLoad();
    const [old] = pidsFrom('kv-a');
    await register('kv', 'v1.0.0', bundles.kvA2!);
    // Registering alone changes nothing that runs.
    expect(pidsFrom('kv-a')).toEqual([old]);
    await load.progress(4 * CLIENTS);
    const cli = cliRunner({ addr: s.url, token: s.rootToken });
    const r = await cli.run(['plugin', 'reload', '-plugin=kv', '-format=json']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const id = JSON.parse(r.stdout).data.reload_id as string;
    const st = await cli.run(['plugin', 'reload-status', id]);
    expect([st.code, st.stderr]).toEqual([0, '']);
    expect(st.stdout).toMatch(/^Time\s+Participant\s+Success\s+Message$/m);
    expect(st.stdout).toMatch(/^\d{4}-\d\d-\d\dT\S+\s+\S+\s+true$/m);
    expect(alive(old!)).toBe(false);
    expect(pidsFrom('kv-a2')).toHaveLength(1);
    await load.progress(4 * CLIENTS);
    const { failures, acked } = await load.stop();
    expect(failures).toEqual([]);
    await expectAllReadable(acked);
  });

  it('refuses a new version that exits during start-up, fails Describe or crashes during Setup, and one re-registered broken: the old process keeps serving', async () => {
    const serving = pidsFrom('kv-a2');
    expect(serving).toHaveLength(1);
    await register('kv', 'v9.0.0', bundles.exits!);
    await register('kv', 'v9.0.1', bundles.noDescribe!);
    await register('kv', 'v9.0.2', bundles.noDescribe!, ['--exit-in-setup']);
    const load = startLoad();
    await load.progress(4 * CLIENTS);

    const exits = await s.api('POST', 'sys/mounts/up-kv/tune', { plugin_version: 'v9.0.0' });
    expect(exits.status).toBe(400);
    const exitsWhy = exits.body.errors.join(' ');
    expect(exitsWhy).toContain('plugin_version: v9.0.0 of kv did not start, so "up-kv/" still runs v1.0.0');
    expect(exitsWhy).toContain('plugin kv v9.0.0 exited (code 3) before its handshake');

    const noDescribe = await s.api('POST', 'sys/mounts/up-kv/tune', { plugin_version: 'v9.0.1' });
    expect(noDescribe.status).toBe(400);
    // The plugin's own error text stays in the server log (a plugin's internal errors never reach clients).
    expect(noDescribe.body.errors.join(' ')).toContain('plugin_version: v9.0.1 of kv did not start, so "up-kv/" still runs v1.0.0: plugin kv v9.0.1 failed its Setup and Describe of "up-kv/"');
    const crashes = await s.api('POST', 'sys/mounts/up-kv/tune', { plugin_version: 'v9.0.2' });
    expect(crashes.status).toBe(400);
    // The exit, the broken connection and the failed Setup call race: each names the failure during warm-up.
    expect(crashes.body.errors.join(' ')).toMatch(
      /plugin_version: v9\.0\.2 of kv did not start, so "up-kv\/" still runs v1\.0\.0: plugin kv v9\.0\.2 (exited during warm-up \((exit code 5|connection lost: [^)]*)\); see the server log|failed its Setup and Describe of "up-kv\/")/,
    );
    // Their processes had started: they are gone again.
    expect(pidsFrom('kv-nodescribe')).toEqual([]);
    expect(pidsFrom('kv-exits')).toEqual([]);

    // The same version re-registered with a broken build: the reload is refused, its status says why.
    await register('kv', 'v1.0.0', bundles.exits!);
    const reload = await s.api('POST', 'sys/plugins/reload/backend', { mounts: ['up-kv'] });
    expect(reload.status).toBe(400);
    const why = reload.body.errors.join(' ');
    expect(why).toContain('nothing was switched');
    expect(why).toContain('plugin kv v1.0.0 exited (code 3) before its handshake');
    const id = /reload ([0-9a-f-]{36}) failed/.exec(why)![1];
    const st = await s.api('GET', `sys/plugins/reload/backend/status?reload_id=${id}`);
    const [result] = Object.values(st.body.data.results as Record<string, { error: string }>);
    expect(result!.error).toContain('exited (code 3) before its handshake');

    // Nothing switched: the mount entry, the running version and the process are the ones before.
    expect(await mountView('up-kv')).toMatchObject({ plugin_version: 'v1.0.0', running_plugin_version: 'v1.0.0' });
    expect(pidsFrom('kv-a2')).toEqual(serving);
    await load.progress(4 * CLIENTS);
    const { failures, acked } = await load.stop();
    expect(failures).toEqual([]);
    await expectAllReadable(acked);
    await register('kv', 'v1.0.0', bundles.kvA2!);
  });

  it('switches an auth method (sys/auth/:path/tune) while logins go on: none fails, the old process exits', async () => {
    await register('userpass', 'v1.0.0', bundles.upA!);
    await register('userpass', 'v1.1.0', bundles.upB!);
    expect((await s.api('POST', 'sys/auth/up-users', { type: 'userpass', plugin_version: 'v1.0.0' })).status).toBe(204);
    expect((await s.api('POST', 'auth/up-users/users/alice', { password: 'correct horse', policies: 'default' })).status).toBe(204);
    let running = true;
    let logins = 0;
    const failures: string[] = [];
    const loop = async () => {
      while (running) {
        const r = await s.api('POST', 'auth/up-users/login/alice', { password: 'correct horse' }, { token: null });
        if (r.status !== 200 || typeof r.body?.auth?.client_token !== 'string') failures.push(`${r.status} ${r.text.slice(0, 300)}`);
        logins++;
      }
    };
    const loops = Promise.all(Array.from({ length: 4 }, loop));
    for (const [from, to, version] of [['userpass-a', 'userpass-b', 'v1.1.0'], ['userpass-b', 'userpass-a', 'v1.0.0']] as const) {
      const [old] = pidsFrom(from);
      expect(old).toBeDefined();
      const before = logins;
      await waitFor('logins before the switch', () => logins >= before + 8, 120_000);
      const t = await s.api('POST', 'sys/auth/up-users/tune', { plugin_version: version });
      expect([t.status, t.text]).toEqual([204, '']);
      expect(alive(old!)).toBe(false);
      expect(pidsFrom(to)).toHaveLength(1);
      expect((await s.api('GET', 'sys/auth/up-users/tune')).body.data.plugin_version).toBe(version);
    }
    running = false;
    await loops;
    expect(failures).toEqual([]);
  });
});
