/**
 * Runs the real echo fixture plugin as a child process (built by
 * `npx tsc -b sdk-plugin`, then bundled into one file as every plugin is)
 * through the catalog and supervisor.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { createMemoryStorage, StrongroomError, type LogicalRequest, type MountInfo, type Storage, type SystemView } from '@strongroom/sdk-plugin/host';
import * as transport from '@strongroom/sdk-plugin/host';
import { createPluginCatalog, type PluginCatalog, type PluginEntry } from '../catalog/catalog.js';
import { createPluginSupervisor, type PluginSupervisor, type PluginSupervisorDeps } from './supervisor.js';
import { bundledFixture } from './bundled-fixture.js';

const FIXTURE = path.resolve(__dirname, '../../../sdk-plugin/dist/transport/fixtures/echo-plugin.js');
if (!fs.existsSync(FIXTURE)) {
  throw new Error(`echo fixture not built at ${FIXTURE}: run "npx tsc -b sdk-plugin" first`);
}
const DB_FIXTURE = path.resolve(__dirname, '../../../sdk-plugin/dist/transport/fixtures/database-fixture-plugin.js');

// The sandbox lets a plugin read its one file only: the fixtures run bundled, as the build bundles the built-ins.
const bundles = fs.mkdtempSync(path.join(os.tmpdir(), 'sr-sup-bundles-'));
let ECHO: string;
let DB: string;
beforeAll(() => {
  ECHO = bundledFixture(FIXTURE, bundles);
  DB = bundledFixture(DB_FIXTURE, bundles);
});
afterAll(() => fs.rmSync(bundles, { recursive: true, force: true }));

jest.setTimeout(30_000);

const mountInfo = (uuid: string, p = `${uuid}/`, options: Record<string, string> = {}): MountInfo => ({
  path: p,
  type: 'echo',
  uuid,
  accessor: `echo_${uuid}`,
  namespace: '',
  options,
  isAuth: false,
});

const request = (mount: MountInfo, path: string, operation: LogicalRequest['operation'] = 'update', data: Record<string, unknown> = {}): LogicalRequest => ({
  id: `req-${Math.random()}`,
  operation,
  path,
  mount,
  data,
  client: { remoteAddress: '127.0.0.1', displayName: 'token', tokenAccessor: 'acc', entityId: 'ent', policies: ['default'], metadata: { role: 'r1' } },
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const rejection = async (p: Promise<unknown>): Promise<StrongroomError> => {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(StrongroomError);
    return err as StrongroomError;
  }
  throw new Error('expected a rejection');
};

const waitFor = async (cond: () => boolean, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('plugin supervisor with the echo fixture', () => {
  let tmp: string;
  let pluginDir: string;
  let storages: Map<string, Storage>;
  let catalog: PluginCatalog;
  let builtin: PluginEntry;
  const logs: Array<{ meta: Record<string, unknown>; msg: string; extra?: Record<string, unknown> }> = [];
  const supervisors: PluginSupervisor[] = [];

  const systemView: SystemView = {
    defaultLeaseTtl: async () => 3600,
    maxLeaseTtl: async () => 7200,
    generatePasswordFromPolicy: async (name) => `pw-from-${name}`,
    coreVersion: async () => '0.1.0-test',
    sendEvent: async () => undefined,
  };

  const makeSupervisor = (opts: Partial<PluginSupervisorDeps> = {}) => {
    const logger = (meta: Record<string, unknown>) => {
      const rec = (msg: string, extra?: Record<string, unknown>) => void logs.push({ meta, msg, ...(extra ? { extra } : {}) });
      return { debug: rec, info: rec, warn: rec, error: rec };
    };
    const s = createPluginSupervisor({
      catalog,
      logger: { child: (meta) => logger(meta) },
      callbacks: {
        storageFor: (uuid) => {
          let st = storages.get(uuid);
          if (!st) storages.set(uuid, (st = createMemoryStorage()));
          return st;
        },
        systemViewFor: () => systemView,
      },
      runDir: path.join(tmp, 'run'),
      callTimeoutMs: 5_000,
      startTimeoutMs: 10_000,
      backoffBaseMs: 20,
      stopGraceMs: 1_000,
      ...opts,
    });
    supervisors.push(s);
    return s;
  };

  const registerExternal = async (version: string) => {
    // An external plugin is one bundled JavaScript file.
    const script = path.join(pluginDir, `echo-${version}.js`);
    fs.copyFileSync(ECHO, script);
    const sha256 = createHash('sha256').update(fs.readFileSync(script)).digest('hex');
    return catalog.register({ type: 'secret', name: 'echo', version, command: path.basename(script), sha256 });
  };

  beforeEach(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sr-sup-'));
    pluginDir = path.join(tmp, 'plugins');
    fs.mkdirSync(pluginDir);
    storages = new Map();
    logs.length = 0;
    catalog = createPluginCatalog({
      store: createMemoryStorage(),
      pluginDirectory: pluginDir,
      builtins: [{ type: 'secret', name: 'echo', version: 'v0.1.0+builtin', main: ECHO }],
    });
    const e = await catalog.get('secret', 'echo');
    if (!e) throw new Error('builtin missing');
    builtin = e;
  });

  afterEach(async () => {
    await Promise.all(supervisors.splice(0).map((s) => s.shutdown()));
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('dev CPU profiling: each plugin process writes its profile on exit (outside the sandbox, which refuses it)', async () => {
    const profiles = path.join(tmp, 'profiles');
    fs.mkdirSync(profiles);
    const sup = makeSupervisor({ cpuProfileDir: profiles });
    const m = mountInfo('m1', 'echo/');
    const backend = await sup.mount(builtin, m, {});
    expect(await backend.handleRequest(request(m, 'echo', 'update', { n: 1 }))).toBeTruthy();
    await sup.shutdown();
    expect(fs.readdirSync(profiles).filter((f) => f.endsWith('.cpuprofile'))).toHaveLength(1);
  });

  test('handshake, Setup answers special paths and describe, echo round trip carries data and client info', async () => {
    const sup = makeSupervisor();
    const m = mountInfo('m1', 'echo/');
    const backend = await sup.mount(builtin, m, {});
    expect(sup.status('m1')).toBe('running');
    expect(backend.specialPaths()).toEqual({ unauthenticated: ['login'], root: ['root/*'] });
    expect(backend.describe().secretTypes).toEqual(['creds']);
    expect(backend.describe().paths[0]?.fields[0]).toEqual({ name: 'key', schema: { type: 'string' }, description: 'key', required: true, inPath: true });

    const req = request(m, 'echo', 'update', { n: 1, nested: { list: [1, 'two', null] }, big: 'x'.repeat(100_000) });
    req.headers = { 'x-test': 'yes' };
    const res = await backend.handleRequest(req);
    expect(res?.warnings).toEqual(['echoed']);
    expect(res?.data).toEqual({
      operation: 'update',
      path: 'echo',
      data: req.data,
      client: req.client,
      mount: 'echo/',
      headers: { 'x-test': 'yes' },
    });
    // The plugin's JSON stderr lines reach the core's log tagged with the plugin.
    await waitFor(() => logs.some((l) => l.msg === 'mounted'));
    const line = logs.find((l) => l.msg === 'mounted');
    expect(line?.meta).toEqual({ plugin: 'echo', plugin_version: 'v0.1.0+builtin' });
    expect(line?.extra?.mount).toBe('echo/');
  });

  test('secrets travel both ways: issue, then renew and revoke with internal data', async () => {
    const sup = makeSupervisor();
    const m = mountInfo('m1');
    const backend = await sup.mount(builtin, m);
    const issued = await backend.handleRequest(request(m, 'issue'));
    expect(issued?.secret).toEqual({ type: 'creds', ttl: 60, maxTtl: 120, renewable: true, internalData: { username: 'u-1' } });
    const renew = request(m, 'issue', 'renew');
    renew.secret = { leaseId: 'echo/issue/abc', secretType: 'creds', internalData: { username: 'u-1' }, ttl: 60, increment: 30, issueTime: 1, lastRenewalTime: null };
    expect((await backend.handleRequest(renew))?.data).toEqual({ op: 'renew', internal: { username: 'u-1' }, lease: 'echo/issue/abc' });
    expect(await backend.handleRequest(request(m, 'nothing-here', 'read'))).toBeNull();
  });

  test('typed errors cross the wire; untyped ones become a bare internal error', async () => {
    const sup = makeSupervisor();
    const m = mountInfo('m1');
    const backend = await sup.mount(builtin, m);
    const bad = await rejection(backend.handleRequest(request(m, 'fail')));
    expect([bad.code, bad.status, bad.message, bad.details]).toEqual(['bad_request', 400, 'invalid field "x"', ['x: must be a number']]);
    const boom = await rejection(backend.handleRequest(request(m, 'boom')));
    expect([boom.code, boom.status, boom.message]).toEqual(['internal', 500, 'internal error']);
  });

  test('storage and system view callbacks reach the mount\'s own storage', async () => {
    const sup = makeSupervisor();
    const m = mountInfo('m1');
    const backend = await sup.mount(builtin, m);
    expect(await backend.existenceCheck(request(m, 'kv/a/b'))).toEqual({ checkFound: true, exists: false });
    await backend.handleRequest(request(m, 'kv/a/b', 'update', { v: 42 }));
    await backend.handleRequest(request(m, 'kv/a/c/d', 'update', { v: 43 }));
    const stored = await storages.get('m1')?.get('a/b');
    expect(JSON.parse(Buffer.from(stored as Uint8Array).toString('utf8'))).toEqual({ v: 42 });
    expect((await backend.handleRequest(request(m, 'kv/a/b', 'read')))?.data).toEqual({ v: 42 });
    expect((await backend.handleRequest(request(m, 'kv/a/', 'list')))?.data).toEqual({ keys: ['b', 'c/'] });
    expect(await backend.existenceCheck(request(m, 'kv/a/b'))).toEqual({ checkFound: true, exists: true });
    await backend.handleRequest(request(m, 'kv/a/b', 'delete'));
    expect(await storages.get('m1')?.get('a/b')).toBeNull();
    expect((await backend.handleRequest(request(m, 'sys', 'read')))?.data).toEqual({
      default_ttl: 3600,
      max_ttl: 7200,
      version: '0.1.0-test',
      password: 'pw-from-default',
    });
  });

  test("a mount's TTLs go with each request: the engine's system view answers them without asking, and a tune shows on the next request", async () => {
    let ttls = { defaultTtl: 60, maxTtl: 120 };
    const asked: string[] = [];
    const counting: SystemView = {
      ...systemView,
      defaultLeaseTtl: async () => (asked.push('default'), 3600),
      maxLeaseTtl: async () => (asked.push('max'), 7200),
    };
    const sup = makeSupervisor({ callbacks: { storageFor: () => createMemoryStorage(), systemViewFor: () => counting, mountTtls: () => ttls } });
    const m = mountInfo('m1');
    const backend = await sup.mount(builtin, m);
    expect((await backend.handleRequest(request(m, 'sys', 'read')))?.data).toMatchObject({ default_ttl: 60, max_ttl: 120 });
    ttls = { defaultTtl: 30, maxTtl: 90 };
    expect((await backend.handleRequest(request(m, 'sys', 'read')))?.data).toMatchObject({ default_ttl: 30, max_ttl: 90 });
    expect(asked).toEqual([]);
  });

  test('a write sent for the plugin to resolve runs its existence check there: the handler sees create, then update', async () => {
    const sup = makeSupervisor();
    const m = mountInfo('m1');
    const backend = await sup.mount(builtin, m);
    const write = () => ({ ...request(m, 'upsert/k', 'update', { v: 1 }), resolveExistence: true });
    expect((await backend.handleRequest(write()))?.data).toEqual({ operation: 'create' });
    expect((await backend.handleRequest(write()))?.data).toEqual({ operation: 'update' });
    // Without the flag the operation sent is the one handled.
    expect((await backend.handleRequest(request(m, 'upsert/new', 'update', { v: 2 })))?.data).toEqual({ operation: 'update' });
  });

  test('a plugin process cannot read storage of a mount it does not serve', async () => {
    const sup = makeSupervisor();
    const ext = await registerExternal('1.0.0');
    const a = mountInfo('mount-a');
    const b = mountInfo('mount-b');
    const backendA = await sup.mount(builtin, a);
    const backendB = await sup.mount(ext, b);
    expect(sup.pid('mount-a')).not.toBe(sup.pid('mount-b'));
    await backendA.handleRequest(request(a, 'kv/secret', 'update', { v: 'top' }));

    // Same process, own mount: allowed.
    expect((await backendA.handleRequest(request(a, 'cross', 'read', { mount_uuid: 'mount-a', key: 'secret' })))?.data).toEqual({
      value: '{"v":"top"}',
    });
    // Another plugin process asking for mount-a: refused by the core.
    const err = await rejection(backendB.handleRequest(request(b, 'cross', 'read', { mount_uuid: 'mount-a', key: 'secret' })));
    expect(err.status).toBe(403);
    expect(err.message).toMatch(/mount mount-a is not served by this plugin process/);
    // A mount uuid nobody serves: refused too.
    expect((await rejection(backendA.handleRequest(request(a, 'cross', 'read', { mount_uuid: 'nope', key: 'x' })))).status).toBe(403);
  });

  test('200 concurrent calls share one process and one stream', async () => {
    const sup = makeSupervisor();
    const m1 = mountInfo('m1');
    const m2 = mountInfo('m2');
    const [b1, b2] = await Promise.all([sup.mount(builtin, m1), sup.mount(builtin, m2)]);
    expect(sup.pid('m1')).toBe(sup.pid('m2'));
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => (i % 2 ? b1 : b2).handleRequest(request(i % 2 ? m1 : m2, 'echo', 'update', { i }))),
    );
    results.forEach((r, i) => {
      expect((r?.data as { data: { i: number }; mount: string }).data.i).toBe(i);
      expect((r?.data as { mount: string }).mount).toBe(i % 2 ? 'm1/' : 'm2/');
    });
  });

  test('a call past its deadline fails with a 504 naming the plugin, and the plugin keeps serving', async () => {
    const sup = makeSupervisor({ callTimeoutMs: 300 });
    const m = mountInfo('m1');
    const backend = await sup.mount(builtin, m);
    const err = await rejection(backend.handleRequest(request(m, 'sleep', 'update', { ms: 2000 })));
    expect(err.status).toBe(504);
    expect(err.message).toMatch(/plugin echo v0\.1\.0\+builtin did not answer/);
    expect((await backend.handleRequest(request(m, 'sleep', 'update', { ms: 1 })))?.data).toEqual({ slept: 1 });
  });

  test('SIGKILL during in-flight requests: each fails at once with a 502 naming the plugin, then it restarts', async () => {
    const sup = makeSupervisor();
    const m = mountInfo('m1');
    const backend = await sup.mount(builtin, m);
    await backend.handleRequest(request(m, 'kv/k', 'update', { v: 1 }));
    const pid = sup.pid('m1') as number;
    const inflight = Array.from({ length: 10 }, () => rejection(backend.handleRequest(request(m, 'sleep', 'update', { ms: 20_000 }))));
    await new Promise((r) => setTimeout(r, 100));
    const killedAt = Date.now();
    process.kill(pid, 'SIGKILL');
    const errors = await Promise.all(inflight);
    expect(Date.now() - killedAt).toBeLessThan(5_000);
    for (const e of errors) {
      expect(e.status).toBe(502);
      expect(e.message).toMatch(/plugin echo v0\.1\.0\+builtin/);
    }
    // The next call waits for the restart (and re-Setup of the mount), then succeeds.
    expect((await backend.handleRequest(request(m, 'kv/k', 'read')))?.data).toEqual({ v: 1 });
    expect(sup.pid('m1')).not.toBe(pid);
    expect(sup.status('m1')).toBe('running');
  });

  test('repeated crashes mark the plugin degraded (503) until reload', async () => {
    const sup = makeSupervisor({ maxCrashes: 3 });
    const m = mountInfo('m1');
    const backend = await sup.mount(builtin, m);
    for (let i = 0; i < 3; i++) {
      const err = await rejection(backend.handleRequest(request(m, 'crash')));
      expect(err.status).toBe(502);
      if (i < 2) await waitFor(() => sup.status('m1') === 'running');
    }
    await waitFor(() => sup.status('m1') === 'degraded');
    const err = await rejection(backend.handleRequest(request(m, 'echo')));
    expect(err.status).toBe(503);
    expect(err.message).toBe('plugin echo v0.1.0+builtin is degraded after repeated crashes; reload it with sys/plugins/reload/backend');
    await sup.reload('secret', 'echo');
    expect(sup.status('m1')).toBe('running');
    expect((await backend.handleRequest(request(m, 'echo')))?.data).toMatchObject({ mount: 'm1/' });
  });

  test('sha256 is checked before every start: a changed command is refused', async () => {
    const sup = makeSupervisor();
    const ext = await registerExternal('1.2.3');
    const m = mountInfo('m1');
    const backend = await sup.mount(ext, m);
    expect((await backend.handleRequest(request(m, 'echo')))?.data).toMatchObject({ mount: 'm1/' });
    fs.appendFileSync(path.join(pluginDir, 'echo-1.2.3.js'), '// tampered\n');
    await expect(sup.reload('secret', 'echo', 'v1.2.3')).rejects.toThrow('plugin sha256 mismatch for echo v1.2.3');
    const other = await rejection(makeSupervisor().mount(ext, mountInfo('m2')));
    expect(other.message).toBe('plugin sha256 mismatch for echo v1.2.3');
  });

  test('a plugin reads its own file only: loading code beside it fails, with an error naming the refused read', async () => {
    const sup = makeSupervisor();
    // A registered file that loads a second file the sha256 does not cover.
    fs.writeFileSync(path.join(pluginDir, 'lib.js'), `require(${JSON.stringify(ECHO)});\n`);
    fs.writeFileSync(path.join(pluginDir, 'split.js'), "require('./lib.js');\n");
    const sha256 = createHash('sha256').update(fs.readFileSync(path.join(pluginDir, 'split.js'))).digest('hex');
    const split = await catalog.register({ type: 'secret', name: 'echo', version: '3.0.0', command: 'split.js', sha256 });
    const err = await rejection(sup.mount(split, mountInfo('m1')));
    expect(err.message).toBe(
      `plugin echo v3.0.0 exited (code 1) before its handshake: the sandbox refused to let it read ${fs.realpathSync(pluginDir)}/lib.js. A plugin may read only its own file, which the sha256 covers: build it into one bundled JavaScript file (the SDK README's esbuild command) and register that`,
    );
    expect(sup.status('m1')).toBe('failed');
  });

  test('a mount whose Setup fails is refused without touching the other mounts', async () => {
    const sup = makeSupervisor();
    const good = await sup.mount(builtin, mountInfo('good'));
    const err = await rejection(sup.mount(builtin, mountInfo('bad', 'bad/', { fail_setup: 'true' })));
    expect(err.message).toBe('fail_setup requested');
    expect(sup.status('bad')).toBe('failed');
    expect((await good.handleRequest(request(mountInfo('good'), 'echo')))?.data).toMatchObject({ mount: 'good/' });
  });

  test('shutdown leaves no child process and removes the private socket directory', async () => {
    const sup = makeSupervisor();
    const ext = await registerExternal('2.0.0');
    await sup.mount(builtin, mountInfo('m1'));
    await sup.mount(ext, mountInfo('m2'));
    const pids = [sup.pid('m1'), sup.pid('m2')] as number[];
    expect(pids.every(alive)).toBe(true);
    const runDir = path.join(tmp, 'run');
    const dirs = fs.readdirSync(runDir);
    expect(dirs).toHaveLength(2);
    for (const d of dirs) expect(fs.statSync(path.join(runDir, d)).mode & 0o777).toBe(0o700);
    await sup.shutdown();
    expect(pids.some(alive)).toBe(false);
    expect(fs.readdirSync(runDir)).toEqual([]);
  });

  test('a new version takes over a mount only once it is set up; calls in flight finish on the old process, which then exits', async () => {
    const sup = makeSupervisor();
    const m = mountInfo('m1');
    const backend = await sup.mount(builtin, m);
    const oldPid = sup.pid('m1') as number;
    const ext = await registerExternal('1.2.3');
    // In flight on the old process across the switch; the old process writes `k` only when told to (storage key `go`).
    const slow = backend.handleRequest(request(m, 'write-when/k', 'update', { when: 'go', v: 'old' }));
    const order: string[] = [];
    void slow.then(() => order.push('slow answered'));
    const switched = sup.mount(ext, m).then((b) => (order.push('switched'), b));
    await waitFor(() => sup.pid('m1') !== oldPid && sup.pid('m1') !== null);
    const newPid = sup.pid('m1') as number;
    // New calls, through the mount's old Backend too, go to the new process while the old one still serves its call.
    expect((await backend.handleRequest(request(m, 'pid', 'read')))?.data).toEqual({ pid: newPid });
    expect(alive(oldPid)).toBe(true);
    // The write the old process makes now reaches the new one's cache as an invalidation before it is acknowledged.
    await storages.get('m1')!.put('go', Buffer.from('1'));
    expect((await slow)?.data).toEqual({ pid: oldPid });
    expect((await backend.handleRequest(request(m, 'invalidated', 'read')))?.data).toEqual({ keys: ['k'] });
    const next = await switched;
    expect(order).toEqual(['slow answered', 'switched']);
    expect(alive(oldPid)).toBe(false);
    expect((await next.handleRequest(request(m, 'kv/k', 'read')))?.data).toEqual({ when: 'go', v: 'old' });
  });

  test('a new version that fails to start or to set the mount up is refused and the old process keeps serving', async () => {
    const sup = makeSupervisor();
    const m = mountInfo('m1');
    const backend = await sup.mount(builtin, m);
    const pid = sup.pid('m1') as number;
    const ext = await registerExternal('1.2.3');
    fs.appendFileSync(path.join(pluginDir, 'echo-1.2.3.js'), '// tampered\n');
    expect((await rejection(sup.mount(ext, m))).message).toBe('plugin sha256 mismatch for echo v1.2.3');
    const failing = await registerExternal('1.2.4');
    expect((await rejection(sup.mount(failing, mountInfo('m1', 'm1/', { fail_setup: 'true' })))).message).toBe(
      'plugin echo v1.2.4 failed its Setup and Describe of "m1/": fail_setup requested',
    );
    await expect(sup.reload('secret', 'echo', 'v1.2.4')).resolves.toBeUndefined(); // nothing of that version runs
    expect(sup.pid('m1')).toBe(pid);
    expect(sup.status('m1')).toBe('running');
    expect((await backend.handleRequest(request(m, 'pid', 'read')))?.data).toEqual({ pid });
    expect(sup.stats().map((p) => p.version)).toEqual(['v0.1.0+builtin']);
  });

  test('two switches of one mount at once run one after the other: the last wins and no other process is left', async () => {
    const sup = makeSupervisor();
    const m = mountInfo('m1');
    await sup.mount(builtin, m);
    const first = sup.pid('m1') as number;
    const [a, b] = [await registerExternal('1.2.3'), await registerExternal('1.2.4')];
    const pids: number[] = [];
    const [ba, bb] = await Promise.all([
      sup.mount(a, m).then(async (x) => (pids.push((await x.handleRequest(request(m, 'pid', 'read')))?.data?.pid as number), x)),
      sup.mount(b, m),
    ]);
    const last = sup.pid('m1') as number;
    expect((await bb.handleRequest(request(m, 'pid', 'read')))?.data).toEqual({ pid: last });
    expect((await ba.handleRequest(request(m, 'pid', 'read')))?.data).toEqual({ pid: last });
    expect(alive(first)).toBe(false);
    expect(pids.filter((p) => p !== last).every((p) => !alive(p))).toBe(true);
    expect(sup.stats().map((p) => p.version)).toEqual(['v1.2.4']);
  });

  test('unmounting the last mount stops the process', async () => {
    const sup = makeSupervisor();
    await sup.mount(builtin, mountInfo('m1'));
    await sup.mount(builtin, mountInfo('m2'));
    const pid = sup.pid('m1') as number;
    await sup.unmount('m1');
    expect(alive(pid)).toBe(true);
    await sup.unmount('m2');
    expect(alive(pid)).toBe(false);
  });
});

describe('plugin supervisor: database plugins on demand', () => {
  let tmp: string;
  let pluginDir: string;
  let catalog: PluginCatalog;
  let sup: PluginSupervisor;

  /** The fixture writes its pid beside its socket once serving; the health check goes over the handed-out address. */
  const pidAt = async (addr: { socketPath: string; secret: string }): Promise<number> => {
    await transport.waitHealthy({ socketPath: addr.socketPath, secret: addr.secret, label: 'fixture', timeoutMs: 5_000 });
    return Number(fs.readFileSync(path.join(path.dirname(addr.socketPath), 'pid'), 'utf8'));
  };

  beforeEach(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sr-supdb-'));
    pluginDir = path.join(tmp, 'plugins');
    fs.mkdirSync(pluginDir);
    catalog = createPluginCatalog({
      store: createMemoryStorage(),
      pluginDirectory: pluginDir,
      builtins: [{ type: 'database', name: 'fixture-database-plugin', version: 'v0.1.0+builtin', main: DB }],
    });
    sup = createPluginSupervisor({
      catalog,
      logger: { child: () => ({ debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined }) },
      callbacks: {
        storageFor: () => {
          throw new Error('a database plugin has no storage');
        },
        systemViewFor: () => {
          throw new Error('a database plugin has no system view');
        },
      },
      runDir: path.join(tmp, 'run'),
      callTimeoutMs: 5_000,
      startTimeoutMs: 10_000,
      backoffBaseMs: 20,
      stopGraceMs: 1_000,
    });
  });

  afterEach(async () => {
    await sup.shutdown();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('one process per version, started once, with a per-process secret; restarted on crash; none left at shutdown', async () => {
    const builtin = (await catalog.get('database', 'fixture-database-plugin')) as PluginEntry;
    const [a, b] = await Promise.all([sup.openDatabase(builtin), sup.openDatabase(builtin)]);
    expect(a).toEqual(b);
    expect(a.version).toBe('v0.1.0+builtin');
    expect(fs.statSync(path.dirname(a.socketPath)).mode & 0o777).toBe(0o700);
    const pid = await pidAt(a);
    expect(alive(pid)).toBe(true);

    // A second registered version runs side by side in its own process.
    const script = path.join(pluginDir, 'fixture-2.js');
    fs.copyFileSync(DB, script);
    const sha256 = createHash('sha256').update(fs.readFileSync(script)).digest('hex');
    const v2 = await catalog.register({ type: 'database', name: 'fixture-database-plugin', version: '2.0.0', command: 'fixture-2.js', sha256 });
    const c = await sup.openDatabase(v2);
    expect(c.version).toBe('v2.0.0');
    const pid2 = await pidAt(c);
    expect(pid2).not.toBe(pid);

    // A crash: the next open waits for the restart and hands out the new secret.
    process.kill(pid, 'SIGKILL');
    await waitFor(() => !alive(pid));
    const again = await sup.openDatabase(builtin);
    expect(again.secret).not.toBe(a.secret);
    const pid3 = await pidAt(again);
    expect(pid3).not.toBe(pid);

    // The sha256 is checked before every start: a changed file is refused after a crash.
    fs.appendFileSync(script, '# changed\n');
    process.kill(pid2, 'SIGKILL');
    await waitFor(() => !alive(pid2));
    await expect(sup.openDatabase(v2)).rejects.toThrow(/sha256|degraded|not running/);

    await sup.shutdown();
    expect(alive(pid3)).toBe(false);
  });

  test('a backend entry is not a database plugin', async () => {
    await expect(sup.openDatabase({ ...((await catalog.get('database', 'fixture-database-plugin')) as PluginEntry), type: 'secret' })).rejects.toThrow(/not a database plugin/);
  });
});
