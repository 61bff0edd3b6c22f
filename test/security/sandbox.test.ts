/**
 * The plugin sandbox and finding 4 of issue 11, through the real binary and
 * real plugin processes: a plugin (the external probe, and the built-in kv,
 * started the same way) can read neither the core's data directory nor
 * anything outside its own file, cannot start a process or a worker, gets a
 * minimal environment, and holds no descriptor of the core's storage. And
 * finding 4 of issue 26: no read escapes through a symlink of node_modules
 * (`@strongroom/core -> ../../core`) or `..` to a file beside the install,
 * for a built-in (the probe installed as the built-in kv of an install laid
 * out as npm lays out this repository) or an external plugin.
 */
import { cpSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { descendantPids, waitFor } from '../helpers/processes';
import { bundlePlugin, externalPlugin } from '../helpers/plugins';
import { scratchDir, startConfigServer, type RunningServer } from '../helpers/server';

jest.setTimeout(120_000);

const PROBE_MAIN = resolve(__dirname, '../fixtures/probe-plugin/main.js');
const REPO = resolve(__dirname, '../..');

let s: RunningServer & { configFile: string };
let dataDir: string;
let configDir: string;
let pluginDir: string;
let probeCommand: string;

/** A configured server (of `bin`, default this checkout's) on `plugins`, initialized and unsealed, with the probe registered. */
async function serverWithProbe(plugins: string, probe: { command: string; sha256: string }, bin?: string): Promise<RunningServer & { configFile: string }> {
  const server = await startConfigServer(
    `storage "level" { path = "$DIR/data" }
listener "tcp" {
  address     = "127.0.0.1:$PORT"
  tls_disable = true
}
plugin_directory = "${plugins}"
`,
    bin === undefined ? {} : { bin },
  );
  const init = await server.api('POST', 'sys/init', { secret_shares: 1, secret_threshold: 1 }, { token: null });
  expect(init.status).toBe(200);
  server.rootToken = init.body.root_token;
  expect((await server.api('POST', 'sys/unseal', { key: init.body.keys_base64[0] }, { token: null })).body.sealed).toBe(false);
  expect((await server.api('POST', 'sys/plugins/catalog/secret/probe', { command: probe.command, sha256: probe.sha256, version: 'v1.0.0' })).status).toBe(204);
  return server;
}

beforeAll(async () => {
  pluginDir = scratchDir('sr-sandbox-plugins-');
  const probe = externalPlugin(pluginDir, 'probe', PROBE_MAIN);
  probeCommand = probe.command;
  s = await serverWithProbe(pluginDir, probe);
  configDir = dirname(s.configFile);
  dataDir = join(configDir, 'data');
  expect((await s.api('POST', 'sys/mounts/probe', { type: 'probe' })).status).toBe(204);
  expect((await s.api('POST', 'sys/mounts/kv', { type: 'kv', options: { version: '2' } })).status).toBe(204);
  // Data in the core's LevelDB, so its files (log, MANIFEST, LOCK) are open.
  expect((await s.api('POST', 'kv/data/x', { data: { v: '1' } })).status).toBe(200);
});
afterAll(async () => {
  await s.stop('SIGKILL');
});

const plugins = () => descendantPids(s.proc.pid!, '--experimental-permission');
const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
const pluginPid = (needle: string) => plugins().find((pid) => cmdline(pid).some((a) => a.includes(needle)));

describe('an external plugin in the sandbox', () => {
  it("cannot read, list or write the core's data directory, nor the config's directory", async () => {
    for (const target of [dataDir, configDir, '/etc', dirname(pluginDir)]) {
      const r = await s.api('POST', 'probe/probe', { target });
      expect(r.status).toBe(200);
      expect({ target, ...r.body.data, env: undefined }).toEqual({ target, list: 'ERR_ACCESS_DENIED', read: 'ERR_ACCESS_DENIED', write: 'ERR_ACCESS_DENIED', spawn: 'ERR_ACCESS_DENIED', worker: 'ERR_ACCESS_DENIED', env: undefined });
    }
    // What it may read is its own file (the probe is not refused everything), and not the directory it is in.
    const own = await s.api('POST', 'probe/probe', { target: realpathSync(join(pluginDir, 'probe')), file: realpathSync(join(pluginDir, probeCommand)) });
    expect([own.body.data.read_file, own.body.data.list]).toEqual(['allowed', 'ERR_ACCESS_DENIED']);
  });

  it('gets a minimal environment: no PATH, none of the core’s variables', async () => {
    const env: string[] = (await s.api('POST', 'probe/probe', { target: dataDir })).body.data.env;
    expect(env).not.toContain('PATH');
    // The handshake's five, its run dir as HOME and TMPDIR, glibc's mmap threshold, and locale/time zone when the core has them.
    for (const name of env) expect(name).toMatch(/^(HOME|TMPDIR|MALLOC_MMAP_THRESHOLD_|TZ|LANG|LC_ALL|STRONGROOM_PLUGIN_(MAGIC_COOKIE|PROTOCOL_VERSIONS|SOCKET_DIR|CALLBACK|SECRET))$/);
    expect(env).toEqual(expect.arrayContaining(['HOME', 'TMPDIR', 'STRONGROOM_PLUGIN_CALLBACK']));
  });

  it('cannot be registered with NODE_OPTIONS or another NODE_* variable (they would widen the sandbox)', async () => {
    const probe = externalPlugin(pluginDir, 'probe', PROBE_MAIN);
    for (const item of ['NODE_OPTIONS=--allow-child-process', 'node_options=--allow-fs-read=*', 'NODE_PATH=/']) {
      const r = await s.api('POST', 'sys/plugins/catalog/secret/probe-env', { command: probe.command, sha256: probe.sha256, version: 'v1.0.1', env: [item] });
      expect(r.status).toBe(400);
      expect(r.body.errors.join(' ')).toMatch(/env/);
    }
  });
});

describe('every plugin process, built-in or external', () => {
  it('runs under the permission model reading only its own file and run directory, no child processes, no workers', async () => {
    const pids = await waitFor('the kv and probe plugin processes', () => {
      const p = plugins();
      return p.length >= 2 ? p : undefined;
    });
    const kv = pluginPid('plugins/kv/dist/plugin.js');
    expect(kv).toBeDefined();
    for (const pid of pids) {
      const args = cmdline(pid);
      const script = args.find((a) => a.endsWith('.js') && !a.startsWith('--'))!;
      expect(args).toContain('--experimental-permission');
      expect(args.some((a) => a.startsWith('--allow-child-process') || a.startsWith('--allow-worker') || a.startsWith('--allow-addons'))).toBe(false);
      const reads = args.filter((a) => a.startsWith('--allow-fs-read=')).map((a) => a.slice('--allow-fs-read='.length));
      const writes = args.filter((a) => a.startsWith('--allow-fs-write=')).map((a) => a.slice('--allow-fs-write='.length));
      expect(reads.length).toBeGreaterThan(0);
      // Nothing granted covers the data directory or the config file's directory (a grant on a parent would).
      for (const grant of [...reads, ...writes]) {
        expect(grant).not.toBe('*');
        for (const secret of [dataDir, configDir]) expect(`${secret}/`.startsWith(`${grant.replace(/\/$/, '')}/`)).toBe(false);
      }
      expect(writes).toHaveLength(1);
      // Exactly two read grants: the one file it runs (by real path: a file has nothing under it) and its run directory.
      expect(reads).toEqual([realpathSync(script), writes[0]]);
      expect(statSync(script).isFile()).toBe(true);
      // Idle memory: the young generation is capped, as a node option before the script (not a script argument).
      expect(args.indexOf('--max-semi-space-size=1')).toBeGreaterThan(0);
      expect(args.indexOf('--max-semi-space-size=1')).toBeLessThan(args.indexOf(script));
    }
  });

  it("holds no descriptor of the core's storage (finding 4): only its pipes, sockets, and /dev/null", async () => {
    // The core itself does hold them (the check would pass vacuously otherwise).
    const coreTargets = readdirSync(`/proc/${s.proc.pid}/fd`).map((fd) => safeReadlink(`/proc/${s.proc.pid}/fd/${fd}`));
    expect(coreTargets.some((t) => t.startsWith(dataDir))).toBe(true);
    for (const pid of plugins()) {
      const targets = readdirSync(`/proc/${pid}/fd`).map((fd) => safeReadlink(`/proc/${pid}/fd/${fd}`));
      const unexpected = targets.filter((t) => !/^(pipe|socket|anon_inode):/.test(t) && t !== '/dev/null' && t !== '');
      expect({ pid, unexpected }).toEqual({ pid, unexpected: [] });
    }
  });
});

function safeReadlink(p: string): string {
  try {
    return readlinkSync(p);
  } catch {
    return ''; // closed between the listing and the readlink
  }
}

describe('no read escapes through node_modules symlinks or .. (issue 26, finding 4)', () => {
  let top: string;
  let secret: string;
  let installed: RunningServer;
  let probeFile: string;
  let builtinFile: string;

  /**
   * An install laid out as npm lays out this repository (core/, sdk-plugin/,
   * proto/, plugins/<name>/dist/plugin.js, and node_modules/ holding the
   * workspace links npm writes, `@strongroom/core -> ../../core`), in a
   * directory of its own with a secret file beside it, where a config file or
   * a TLS key would sit; its built-in kv is the probe. Beside it, the plugin
   * directory, whose probe ships a node_modules link into the install's.
   */
  beforeAll(async () => {
    top = scratchDir('sr-install-');
    const root = join(top, 'install');
    secret = join(top, 'tls-key.pem');
    writeFileSync(secret, 'a secret beside the install\n');
    mkdirSync(join(root, 'core'), { recursive: true });
    cpSync(join(REPO, 'core/dist'), join(root, 'core/dist'), { recursive: true });
    cpSync(join(REPO, 'core/package.json'), join(root, 'core/package.json'));
    for (const d of ['sdk-plugin', 'proto']) symlinkSync(join(REPO, d), join(root, d));
    mkdirSync(join(root, 'node_modules/@strongroom'), { recursive: true });
    for (const name of readdirSync(join(REPO, 'node_modules'))) {
      if (name !== '@strongroom' && name !== '.bin') symlinkSync(join(REPO, 'node_modules', name), join(root, 'node_modules', name));
    }
    for (const ws of ['core', 'sdk-plugin']) symlinkSync(`../../${ws}`, join(root, 'node_modules/@strongroom', ws));
    builtinFile = bundlePlugin(PROBE_MAIN, join(root, 'plugins/kv/dist/plugin.js'));
    cpSync(join(REPO, 'plugins/kv/package.json'), join(root, 'plugins/kv/package.json'));

    const plugins = join(top, 'plugins');
    const probe = externalPlugin(plugins, 'probe', PROBE_MAIN);
    symlinkSync('../../install/node_modules', join(probe.dir, 'node_modules'));
    probeFile = join(plugins, probe.command);

    installed = await serverWithProbe(plugins, probe, join(root, 'core/dist/cli/main.js'));
    expect((await installed.api('POST', 'sys/mounts/external', { type: 'probe' })).status).toBe(204);
    expect((await installed.api('POST', 'sys/mounts/builtin', { type: 'kv' })).status).toBe(204);
  });
  afterAll(async () => {
    await installed.stop('SIGKILL');
  });

  it.each([
    ['the built-in kv', 'builtin', () => join(top, 'install/node_modules'), () => builtinFile],
    ['an external plugin', 'external', () => join(top, 'plugins/probe/node_modules'), () => probeFile],
  ])('%s reads its own file, and neither the file beside the install nor its parent directory', async (_name, mount, nodeModules, own) => {
    const ask = async (target: string, file: string) => (await installed.api('POST', `${mount}/probe`, { target, file })).body.data;
    // The probe works: its own file is readable.
    expect((await ask(dirname(own()), own())).read_file).toBe('allowed');
    // Through the workspace link: `<node_modules>/@strongroom/core/../..` is the install's parent to the kernel.
    const viaLink = `${nodeModules()}/@strongroom/core/../..`;
    const linked = await ask(viaLink, `${viaLink}/tls-key.pem`);
    expect([linked.list, linked.read_file]).toEqual(['ERR_ACCESS_DENIED', 'ERR_ACCESS_DENIED']);
    // Through `..` from its own directory.
    const up = relative(dirname(own()), top);
    const dotted = await ask(`${dirname(own())}/${up}`, `${dirname(own())}/${up}/tls-key.pem`);
    expect([dotted.list, dotted.read_file]).toEqual(['ERR_ACCESS_DENIED', 'ERR_ACCESS_DENIED']);
    expect(readFileSync(secret, 'utf8')).toContain('secret');
  });
});
