/**
 * The plugin supervisor: runs one process per (type, name, version), serving
 * every mount of that plugin, and hands the core a `Backend` proxy per mount.
 * Database plugins (type `database`) run under the same rules but serve no
 * mount: `openDatabase` starts one on demand and says where it listens; the
 * database engine then talks to it directly (proto/database.proto).
 *
 * What must stay true:
 *  - the command's sha256 is checked before every start (catalog.prepareStart);
 *  - each process gets a fresh secret, a private 0700 socket directory and a
 *    callback server that answers only for the mounts the process serves;
 *  - every call has a deadline; a call in flight when the process dies fails
 *    at once with a 502 naming the plugin; nothing here may throw into the
 *    core's event loop because a plugin misbehaved;
 *  - crashes restart the process with exponential backoff; after `maxCrashes`
 *    within `crashWindowMs` the plugin is degraded (503) until reload();
 *  - the child gets a minimal environment (not the core's), so no server
 *    credential leaks into a plugin.
 *
 * Longer than the project's 600 lines on purpose: it is one state machine (a
 * process's start, handshake, calls, crash, restart, degradation and stop), and
 * splitting it would scatter the transitions that must be read together. How a
 * process is isolated lives beside it (process-sandbox.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { StrongroomError, type Backend, type BackendDescription, type Logger, type MountInfo, type MountTtls, type SpecialPaths, type Storage, type SystemView } from '@strongroom/sdk-plugin/host';
import * as transport from '@strongroom/sdk-plugin/host';
import * as database from '@strongroom/sdk-plugin/database';
import { NODE_ENV_ITEM, type PluginCatalog, type PluginEntry } from '../catalog/catalog.js';
import { PASS_ENV, PLUGIN_V8_FLAGS, exitedBeforeHandshake, sandboxFlags, sealedStdio } from './process-sandbox.js';

export type PluginStatus = 'running' | 'starting' | 'degraded' | 'failed';

export interface PluginSupervisorDeps {
  catalog: Pick<PluginCatalog, 'get' | 'prepareStart'>;
  logger: { child(meta: Record<string, unknown>): Logger };
  callbacks: {
    storageFor(mountUuid: string): Storage;
    systemViewFor(mountUuid: string): SystemView;
    /** The mount's TTLs now, sent with each request so the engine need not ask (MountTtls); without it, the engine asks. */
    mountTtls?(mountUuid: string): MountTtls;
  };
  /** Directory for the per-process private socket directories. */
  runDir: string;
  callTimeoutMs?: number;
  /** Spawn to SERVING health; default 30 s. */
  startTimeoutMs?: number;
  maxCrashes?: number;
  crashWindowMs?: number;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** SIGTERM -> SIGKILL grace at shutdown; default 2 s. */
  stopGraceMs?: number;
  /** True once the server is shutting down (set before the supervisor's own shutdown, which comes last). */
  isStopping?(): boolean;
  /** Metrics hook: a crashed process is being restarted. */
  onRestart?(plugin: string, version: string): void;
  /**
   * Dev servers only (STRONGROOM_DEV_PLUGIN_CPU_PROFILE): each plugin process writes a V8 CPU
   * profile here when it exits. Node 20's permission model refuses --cpu-prof, so these
   * processes run WITHOUT the sandbox.
   */
  cpuProfileDir?: string;
}

export interface PluginProcessStat {
  plugin: string;
  version: string;
  type: PluginEntry['type'];
  state: 'running' | 'starting' | 'backoff' | 'degraded' | 'failed' | 'idle' | 'stopped';
}

export interface PluginSupervisor {
  mount(entry: PluginEntry, mount: MountInfo): Promise<Backend>;
  /** Starts (or finds) the process of a `database` plugin entry and says where it serves; waits while it (re)starts. */
  openDatabase(entry: PluginEntry): Promise<database.DatabasePluginAddress>;
  unmount(mountUuid: string): Promise<void>;
  reload(type: PluginEntry['type'], name: string, version?: string): Promise<void>;
  /** Unknown mounts report 'failed'. */
  status(mountUuid: string): PluginStatus;
  /** Pid of the process serving a mount (tests, sys/ introspection). */
  pid(mountUuid: string): number | null;
  shutdown(): Promise<void>;
  /** Each plugin process and its state, for the plugin gauges. */
  stats(): PluginProcessStat[];
}

type State = 'idle' | 'starting' | 'running' | 'backoff' | 'degraded' | 'failed' | 'stopped';

interface MountRecord {
  mount: MountInfo;
  /** Generation of the process this mount was last set up in (0: never). */
  setupGen: number;
  special: SpecialPaths;
  describe: BackendDescription;
  setupError: Error | null;
  callbacks: transport.MountCallbacks | null;
}

interface Runtime {
  key: string;
  entry: PluginEntry;
  label: string;
  log: Logger;
  dir: string;
  callbackPath: string;
  callbackServer: transport.CallbackServer;
  secret: Buffer;
  state: State;
  lastError: Error | null;
  generation: number;
  everRan: boolean;
  child: ChildProcess | null;
  /** Backend plugins: the client of the running process. */
  client: transport.BackendClient | null;
  /** Database plugins: where the running process serves (the engine connects itself). */
  address: database.DatabasePluginAddress | null;
  mounts: Map<string, MountRecord>;
  crashes: number[];
  restartTimer: NodeJS.Timeout | null;
  watchers: Set<() => void>;
  /** The last lines the process wrote to stderr, logged when it fails to start. */
  stderrTail: string[];
}

const MAX_LOG_LINE = 16 * 1024;
const LEVELS = new Set(['debug', 'info', 'warn', 'error']);
const STDERR_TAIL_LINES = 10;

export function createPluginSupervisor(deps: PluginSupervisorDeps): PluginSupervisor {
  const callTimeoutMs = deps.callTimeoutMs ?? 30_000;
  const startTimeoutMs = deps.startTimeoutMs ?? 30_000;
  const maxCrashes = deps.maxCrashes ?? 5;
  const crashWindowMs = deps.crashWindowMs ?? 60_000;
  const backoffBaseMs = deps.backoffBaseMs ?? 250;
  const backoffMaxMs = deps.backoffMaxMs ?? 15_000;
  const stopGraceMs = deps.stopGraceMs ?? 2_000;

  const runtimes = new Map<string, Runtime>();
  const mountIndex = new Map<string, Runtime>();
  const failedMounts = new Map<string, Error>();
  /** Set by shutdown(): processes exiting now are stopping, not crashing. */
  let shuttingDownFlag = false;
  const shuttingDown = () => shuttingDownFlag || (deps.isStopping?.() ?? false);
  fs.mkdirSync(deps.runDir, { recursive: true, mode: 0o700 });

  // ------------------------------------------------------------------ errors

  const degradedError = (rt: Runtime) =>
    new StrongroomError('unavailable', `plugin ${rt.label} is degraded after repeated crashes; reload it with sys/plugins/reload/backend`);
  const crashedError = (rt: Runtime, how: string) => new StrongroomError('plugin_failed', `plugin ${rt.label} crashed (${how})`);
  const notRunningError = (rt: Runtime) =>
    new StrongroomError('coded', `plugin ${rt.label} did not become ready within ${callTimeoutMs} ms`, { status: 504 });

  // ------------------------------------------------------------------ state

  const setState = (rt: Runtime, s: State) => {
    rt.state = s;
    for (const w of [...rt.watchers]) w();
  };

  const waitRunning = (rt: Runtime, timeoutMs: number): Promise<void> => {
    if (rt.state === 'running') return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        rt.watchers.delete(check);
      };
      const check = () => {
        if (rt.state === 'running') {
          done();
          resolve();
        } else if (rt.state === 'degraded') {
          done();
          reject(degradedError(rt));
        } else if (rt.state === 'failed' || rt.state === 'stopped') {
          done();
          reject(rt.lastError ?? new StrongroomError('plugin_failed', `plugin ${rt.label} is not running`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(notRunningError(rt));
      }, timeoutMs);
      timer.unref();
      rt.watchers.add(check);
      check();
    });
  };

  // ------------------------------------------------------------------ runtimes

  const runtimeFor = async (entry: PluginEntry): Promise<Runtime> => {
    const key = `${entry.type}/${entry.name}/${entry.version}`;
    const existing = runtimes.get(key);
    if (existing) return existing;
    const dir = fs.mkdtempSync(path.join(deps.runDir, 'p-'));
    fs.chmodSync(dir, 0o700);
    const callbackPath = path.join(dir, transport.CALLBACK_SOCKET_NAME);
    const rt: Runtime = {
      key,
      entry,
      label: `${entry.name} ${entry.version}`,
      log: deps.logger.child({ plugin: entry.name, plugin_version: entry.version }),
      dir,
      callbackPath,
      // Its callbacks read the runtime only when a plugin calls, by then fully built.
      callbackServer: transport.createCallbackServer({
        socketPath: callbackPath,
        secret: () => rt.secret,
        resolve: (uuid) => {
          const rec = rt.mounts.get(uuid);
          if (!rec) return null;
          rec.callbacks ??= { storage: deps.callbacks.storageFor(uuid), system: deps.callbacks.systemViewFor(uuid) };
          return rec.callbacks;
        },
      }),
      secret: randomBytes(32),
      state: 'idle',
      lastError: null,
      generation: 0,
      everRan: false,
      child: null,
      client: null,
      address: null,
      mounts: new Map(),
      crashes: [],
      restartTimer: null,
      watchers: new Set(),
      stderrTail: [],
    };
    runtimes.set(key, rt);
    await rt.callbackServer.start();
    return rt;
  };

  /** Spawn, read the handshake line, connect, health-check. Throws on any failure. */
  const launch = async (rt: Runtime, gen: number): Promise<void> => {
    const spec = await deps.catalog.prepareStart(rt.entry);
    if (gen !== rt.generation) throw new StrongroomError('unavailable', `start of ${rt.label} superseded`);
    const secret = randomBytes(32).toString('hex');
    rt.secret = Buffer.from(secret, 'utf8');
    const env: Record<string, string> = {};
    for (const k of PASS_ENV) {
      const v = process.env[k];
      if (v !== undefined) env[k] = v;
    }
    // NODE_OPTIONS and friends would widen the sandbox (--allow-child-process): never passed, even from an old entry.
    for (const [k, v] of Object.entries(spec.env)) if (!NODE_ENV_ITEM.test(k)) env[k] = v;
    // Its own run directory is the only place it may write: temp files and "home" go there.
    Object.assign(env, {
      TMPDIR: rt.dir,
      HOME: rt.dir,
      [transport.ENV_MAGIC_COOKIE]: transport.MAGIC_COOKIE_VALUE,
      [transport.ENV_PROTOCOL_VERSIONS]: String(transport.APP_PROTOCOL_VERSION),
      [transport.ENV_SOCKET_DIR]: rt.dir,
      [transport.ENV_CALLBACK]: rt.callbackPath,
      [transport.ENV_SECRET]: secret,
    });
    // A process group of its own: SIGTERM or Ctrl-C to the core's group reaches the core only, which then
    // stops its plugins in order. The plugin still never outlives the core: it exits when its stdin closes.
    const isolation = deps.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${deps.cpuProfileDir}`] : sandboxFlags(spec.main, rt.dir);
    const child = spawn(process.execPath, [...PLUGIN_V8_FLAGS, ...isolation, spec.main, ...spec.args], { env, stdio: sealedStdio(), detached: true });
    rt.stderrTail = [];
    rt.child = child;
    child.stdin?.on('error', () => undefined);
    pipeLogs(rt, child);

    const socketPath = await new Promise<string>((resolve, reject) => {
      const lines = readline.createInterface({ input: child.stdout as NodeJS.ReadableStream });
      let handshaken = false;
      const timer = setTimeout(() => fail(new StrongroomError('plugin_failed', `plugin ${rt.label} did not complete its handshake within ${startTimeoutMs} ms`)), startTimeoutMs);
      const fail = (err: Error) => {
        clearTimeout(timer);
        if (!handshaken) {
          handshaken = true;
          reject(err);
        }
      };
      lines.on('line', (line) => {
        if (handshaken) {
          rt.log.info(line.slice(0, MAX_LOG_LINE), { stream: 'stdout' });
          return;
        }
        handshaken = true;
        clearTimeout(timer);
        try {
          resolve(transport.parseHandshakeLine(line).address);
        } catch (err) {
          reject(new StrongroomError('plugin_failed', `plugin ${rt.label}: ${(err as Error).message}`));
        }
      });
      child.once('error', (err) => fail(new StrongroomError('plugin_failed', `plugin ${rt.label} could not start: ${err.message}`)));
      // 'close', not 'exit': its stderr is read to the end by then, so the reason it gives is in the tail.
      child.once('close', (code, signal) => fail(new StrongroomError('plugin_failed', exitedBeforeHandshake(rt.label, signal ?? `code ${code}`, rt.stderrTail))));
    });
    if (!socketPath.startsWith(rt.dir + path.sep)) {
      throw new StrongroomError('plugin_failed', `plugin ${rt.label} serves outside its private directory`);
    }
    child.once('exit', (code, signal) => onExit(rt, child, signal ?? `exit code ${code}`));
    if (child.exitCode !== null || child.signalCode !== null) onExit(rt, child, 'exited');

    if (rt.entry.type === 'database') {
      // No Backend stream to watch: the exit event alone marks a crash.
      await transport.waitHealthy({ socketPath, secret, label: rt.label, timeoutMs: startTimeoutMs });
      rt.address = { socketPath, secret, version: rt.entry.version };
      return;
    }

    const client = transport.createBackendClient({
      socketPath,
      secret,
      label: rt.label,
      callTimeoutMs,
      onBroken: (reason) => {
        // The stream usually breaks a moment before the exit event; either way the process is done
        // for: count the crash now (so no call reaches the dead stream) and make sure it is gone.
        if (rt.child === child) {
          onExit(rt, child, `connection lost: ${reason}`);
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        }
      },
    });
    rt.client = client;
    await client.waitHealthy(startTimeoutMs);
  };

  const pipeLogs = (rt: Runtime, child: ChildProcess) => {
    const lines = readline.createInterface({ input: child.stderr as NodeJS.ReadableStream });
    lines.on('line', (raw) => {
      const line = raw.slice(0, MAX_LOG_LINE);
      rt.stderrTail.push(line.slice(0, 1024));
      if (rt.stderrTail.length > STDERR_TAIL_LINES) rt.stderrTail.shift();
      let parsed: Record<string, unknown> | null = null;
      try {
        const v: unknown = JSON.parse(line);
        if (v && typeof v === 'object' && !Array.isArray(v)) parsed = v as Record<string, unknown>;
      } catch {
        parsed = null;
      }
      if (!parsed) {
        rt.log.info(line, { stream: 'stderr' });
        return;
      }
      const { level, msg, time: _time, ...meta } = parsed;
      const lv = typeof level === 'string' && LEVELS.has(level) ? (level as 'debug' | 'info' | 'warn' | 'error') : 'info';
      rt.log[lv](typeof msg === 'string' ? msg : line, meta);
    });
  };

  const setupMount = async (rt: Runtime, rec: MountRecord, gen: number) => {
    const client = rt.client;
    if (!client) throw new StrongroomError('plugin_failed', `plugin ${rt.label} is not running`);
    const res = await client.setup(rec.mount, callTimeoutMs);
    rec.special = res.specialPaths;
    rec.describe = res.describe;
    rec.setupGen = gen;
    rec.setupError = null;
  };

  /** Start (or restart) the process and set up every mount. Never throws. */
  const startProcess = async (rt: Runtime): Promise<void> => {
    if (rt.restartTimer) {
      clearTimeout(rt.restartTimer);
      rt.restartTimer = null;
    }
    const gen = ++rt.generation;
    setState(rt, 'starting');
    try {
      await launch(rt, gen);
      await Promise.all(
        [...rt.mounts.values()].map((rec) =>
          setupMount(rt, rec, gen).catch((err: unknown) => {
            rec.setupError = err instanceof Error ? err : new Error(String(err));
            rt.log.error('mount setup failed', { mount: rec.mount.path, error: rec.setupError.message });
          }),
        ),
      );
      if (gen !== rt.generation) return;
      rt.everRan = true;
      rt.lastError = null;
      setState(rt, 'running');
      rt.log.info('plugin running', { pid: rt.child?.pid });
    } catch (err) {
      if (gen !== rt.generation) return;
      const e = err instanceof Error ? err : new Error(String(err));
      rt.lastError = e;
      const child = rt.child;
      rt.child = null;
      rt.address = null;
      rt.client?.close();
      rt.client = null;
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      // The plugin's own last words usually say why (a missing module, a bad flag): the operator needs them here.
      rt.log.error('plugin failed to start', { error: e.message, stderr: rt.stderrTail });
      if (rt.everRan) onCrash(rt);
      else setState(rt, 'failed');
    }
  };

  const onExit = (rt: Runtime, child: ChildProcess, how: string) => {
    if (rt.child !== child) return; // an intentional stop, or an older process
    rt.child = null;
    rt.address = null;
    const client = rt.client;
    rt.client = null;
    client?.failAll(crashedError(rt, how));
    client?.close();
    if (shuttingDown() || rt.state === 'stopped') {
      rt.log.info('plugin process stopped', { how });
      return;
    }
    // A SIGTERM to every process of the service (systemd's control group kill) may reach the plugin a moment
    // before the core's own handler starts the shutdown. The crash is handled now (no call may reach the dead
    // process); only its log line waits that moment, to say "stopped" rather than "exited unexpectedly".
    const stderr = rt.stderrTail.slice(-5);
    setTimeout(() => {
      if (shuttingDown()) rt.log.info('plugin process stopped', { how });
      else rt.log.error('plugin process exited unexpectedly', { how, stderr });
    }, 500).unref();
    rt.lastError = crashedError(rt, how);
    onCrash(rt);
  };

  const onCrash = (rt: Runtime) => {
    ++rt.generation; // any start in progress is now stale
    const now = Date.now();
    rt.crashes = rt.crashes.filter((t) => now - t < crashWindowMs);
    rt.crashes.push(now);
    if (rt.crashes.length >= maxCrashes) {
      rt.log.error('plugin degraded after repeated crashes', { crashes: rt.crashes.length, window_ms: crashWindowMs });
      setState(rt, 'degraded');
      return;
    }
    const delay = Math.min(backoffBaseMs * 2 ** (rt.crashes.length - 1), backoffMaxMs);
    setState(rt, 'backoff');
    deps.onRestart?.(rt.entry.name, rt.entry.version);
    rt.restartTimer = setTimeout(() => void startProcess(rt), delay);
    rt.restartTimer.unref();
  };

  /** Stop the current process (Cleanup of each mount when asked, SIGTERM, SIGKILL after the grace). */
  const stopProcess = async (rt: Runtime, cleanup: boolean) => {
    ++rt.generation;
    if (rt.restartTimer) {
      clearTimeout(rt.restartTimer);
      rt.restartTimer = null;
    }
    const child = rt.child;
    const client = rt.client;
    rt.child = null;
    rt.client = null;
    rt.address = null;
    if (client && cleanup) {
      await Promise.all([...rt.mounts.keys()].map((uuid) => client.cleanup(uuid, Math.min(stopGraceMs, callTimeoutMs)).catch(() => undefined)));
    }
    client?.failAll(new StrongroomError('unavailable', `plugin ${rt.label} is stopping`));
    client?.close();
    if (child) await terminate(child, stopGraceMs);
  };

  const terminate = async (child: ChildProcess, graceMs: number) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    const inTime = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), graceMs).unref())]);
    if (!inTime) {
      child.kill('SIGKILL');
      await exited;
    }
  };

  const disposeRuntime = async (rt: Runtime) => {
    setState(rt, 'stopped');
    await stopProcess(rt, true);
    runtimes.delete(rt.key);
    await rt.callbackServer.close();
    fs.rmSync(rt.dir, { recursive: true, force: true });
  };

  // ------------------------------------------------------------------ proxy

  const ensureReady = async (rt: Runtime, rec: MountRecord): Promise<transport.BackendClient> => {
    if (rt.state === 'degraded') throw degradedError(rt);
    await waitRunning(rt, callTimeoutMs);
    if (rec.setupError) throw rec.setupError;
    if (!rt.client) throw crashedError(rt, 'not connected');
    if (rec.setupGen !== rt.generation) await setupMount(rt, rec, rt.generation);
    return rt.client;
  };

  /** The client to use now: synchronous on the hot path, waiting only while (re)starting. */
  const clientFor = (rt: Runtime, rec: MountRecord): transport.BackendClient | Promise<transport.BackendClient> =>
    rt.state === 'running' && rt.client && rec.setupGen === rt.generation ? rt.client : ensureReady(rt, rec);

  const proxy = (rt: Runtime, rec: MountRecord): Backend => {
    const uuid = rec.mount.uuid;
    const via = async <T>(fn: (c: transport.BackendClient) => Promise<T>): Promise<T> => {
      const c = clientFor(rt, rec);
      return fn(c instanceof Promise ? await c : c);
    };
    return {
      handleRequest: (req) => {
        const c = clientFor(rt, rec);
        const ttls = deps.callbacks.mountTtls?.(uuid);
        return c instanceof Promise ? c.then((cl) => cl.handleRequest(req, ttls)) : c.handleRequest(req, ttls);
      },
      existenceCheck: (req) => via((c) => c.existenceCheck(req)),
      specialPaths: () => rec.special,
      describe: () => rec.describe,
      invalidateKey: (key) => via((c) => c.invalidateKey(uuid, key)),
      periodic: () => via((c) => c.periodic(uuid)),
      cleanup: () => api.unmount(uuid),
    };
  };

  // ------------------------------------------------------------------ API

  const api: PluginSupervisor = {
    async mount(entry, mount) {
      const rt = await runtimeFor(entry);
      if (rt.state === 'degraded') throw degradedError(rt);
      const rec: MountRecord = {
        mount,
        setupGen: 0,
        special: { unauthenticated: [], root: [] },
        describe: { help: '', paths: [], secretTypes: [] },
        setupError: null,
        callbacks: null,
      };
      rt.mounts.set(mount.uuid, rec);
      mountIndex.set(mount.uuid, rt);
      failedMounts.delete(mount.uuid);
      try {
        if (rt.state === 'idle' || rt.state === 'failed') void startProcess(rt);
        await waitRunning(rt, startTimeoutMs + callTimeoutMs);
        if (rec.setupError) throw rec.setupError;
        if (rec.setupGen !== rt.generation) await setupMount(rt, rec, rt.generation);
        return proxy(rt, rec);
      } catch (err) {
        const e = err instanceof Error ? err : new Error(String(err));
        if (rt.mounts.get(mount.uuid) === rec) {
          rt.mounts.delete(mount.uuid);
          mountIndex.delete(mount.uuid);
        }
        failedMounts.set(mount.uuid, e);
        if (rt.mounts.size === 0 && (rt.state as State) !== 'degraded') await disposeRuntime(rt);
        throw e;
      }
    },

    async openDatabase(entry) {
      if (entry.type !== 'database') throw new StrongroomError('internal', `${entry.name} is not a database plugin`);
      const rt = await runtimeFor(entry);
      if (rt.state === 'degraded') throw degradedError(rt);
      if (rt.state === 'idle' || rt.state === 'failed') void startProcess(rt);
      await waitRunning(rt, startTimeoutMs + callTimeoutMs);
      if (!rt.address) throw crashedError(rt, 'not serving');
      return { ...rt.address };
    },

    async unmount(mountUuid) {
      failedMounts.delete(mountUuid);
      const rt = mountIndex.get(mountUuid);
      if (!rt) return;
      mountIndex.delete(mountUuid);
      if (rt.client && rt.state === 'running') {
        await rt.client.cleanup(mountUuid, Math.min(stopGraceMs, callTimeoutMs)).catch((err: Error) => {
          rt.log.warn('cleanup failed', { mount_uuid: mountUuid, error: err.message });
        });
      }
      rt.mounts.delete(mountUuid);
      if (rt.mounts.size === 0) await disposeRuntime(rt);
    },

    async reload(type, name, version) {
      const targets = [...runtimes.values()].filter(
        (rt) => rt.entry.type === type && rt.entry.name === name && (version === undefined || rt.entry.version === version),
      );
      await Promise.all(
        targets.map(async (rt) => {
          rt.log.info('reloading plugin');
          await stopProcess(rt, true);
          // Pick up a re-registered command or sha256 for the same pinned version.
          const fresh = await deps.catalog.get(rt.entry.type, rt.entry.name, rt.entry.version);
          if (fresh) rt.entry = fresh;
          rt.crashes = [];
          rt.everRan = false;
          await startProcess(rt);
          if (rt.state !== 'running') throw rt.lastError ?? new StrongroomError('plugin_failed', `plugin ${rt.label} did not restart`);
          rt.everRan = true;
        }),
      );
    },

    status(mountUuid) {
      if (failedMounts.has(mountUuid)) return 'failed';
      const rt = mountIndex.get(mountUuid);
      if (!rt) return 'failed';
      switch (rt.state) {
        case 'running': {
          const rec = rt.mounts.get(mountUuid);
          return rec?.setupError ? 'failed' : 'running';
        }
        case 'degraded':
          return 'degraded';
        case 'failed':
        case 'stopped':
          return 'failed';
        default:
          return 'starting';
      }
    },

    pid(mountUuid) {
      return mountIndex.get(mountUuid)?.child?.pid ?? null;
    },

    stats() {
      return [...runtimes.values()].map((rt) => ({ plugin: rt.entry.name, version: rt.entry.version, type: rt.entry.type, state: rt.state }));
    },

    async shutdown() {
      shuttingDownFlag = true;
      await Promise.all([...runtimes.values()].map((rt) => disposeRuntime(rt)));
      mountIndex.clear();
      failedMounts.clear();
    },
  };
  return api;
}
