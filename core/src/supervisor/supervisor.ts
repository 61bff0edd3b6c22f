/**
 * The plugin supervisor: runs one process per (type, name, version), serving
 * every mount of that plugin, and hands the core a `Backend` proxy per mount.
 * External database plugins (type `database`, a registered version; the
 * built-in runs inside the database engine) run under the same rules but serve
 * no mount: `openDatabase` starts one on demand and says where it listens; the
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
 *    credential leaks into a plugin;
 *  - a mount moves to another process (a new plugin_version, a reload) only
 *    once that process has passed its handshake, health check and the mount's
 *    Setup (with Describe): until then, and if any of it fails, the old one
 *    serves and nothing changes. Calls already made on the old process finish
 *    there (bounded by `drainMs`) before it gets its Cleanup and SIGTERM; while
 *    both serve a mount, a write by either drops that key from the other's
 *    cache before the write is acknowledged.
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
  /** How long a switch waits for the calls in flight on the old process before it stops it; default 30 s. */
  drainMs?: number;
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
  /**
   * Serves a mount from `entry`'s process. For a mount another process serves
   * (its plugin_version changed), this is the switch: it resolves once the
   * mount runs on the new process and the old one let go of it, and rejects,
   * changing nothing, when the new one fails to start or set the mount up.
   */
  mount(entry: PluginEntry, mount: MountInfo): Promise<Backend>;
  /** Starts (or finds) the process of an external `database` plugin entry and says where it serves; waits while it (re)starts. */
  openDatabase(entry: PluginEntry): Promise<database.DatabasePluginAddress>;
  unmount(mountUuid: string): Promise<void>;
  /**
   * Replaces each process of the plugin by a fresh one (the catalog's entry now: a
   * re-registered sha256 is picked up) set up with the same mounts, then switches
   * them; rejects, switching nothing, if any replacement fails to start.
   */
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
  /** Calls made through this record and not yet answered (a switch drains them). */
  inflight: number;
  idle: (() => void) | null;
}

/** Which process serves a mount now. */
interface Slot {
  rt: Runtime;
  rec: MountRecord;
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
  /** A replacement being started for a switch: any failure ends it (no restart), the old one keeps serving. */
  warming: boolean;
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
  const drainMs = deps.drainMs ?? 30_000;

  /** The process new mounts of each (type, name, version) go to. */
  const runtimes = new Map<string, Runtime>();
  /** Every process, including one being warmed up or drained during a switch. */
  const live = new Set<Runtime>();
  const slots = new Map<string, Slot>();
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

  const keyOf = (entry: PluginEntry) => `${entry.type}/${entry.name}/${entry.version}`;

  const runtimeFor = async (entry: PluginEntry): Promise<Runtime> => {
    const existing = runtimes.get(keyOf(entry));
    if (existing) return existing;
    return createRuntime(entry, true);
  };

  /** A runtime not yet started (its callback server listening); `register`: the one new mounts of its key go to. */
  const createRuntime = async (entry: PluginEntry, register: boolean): Promise<Runtime> => {
    const key = keyOf(entry);
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
          rec.callbacks ??= { storage: bridged(rt, uuid, deps.callbacks.storageFor(uuid)), system: deps.callbacks.systemViewFor(uuid) };
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
      warming: false,
    };
    live.add(rt);
    // Registered before the first await: a concurrent caller finds it rather than making a second one.
    if (register) runtimes.set(key, rt);
    await rt.callbackServer.start();
    return rt;
  };

  /**
   * A mount's storage as one process sees it: while another process serves the
   * same mount (a switch), each key it writes is dropped from the other's cache
   * before the write is acknowledged, so no read there answers the value before it.
   */
  const bridged = (rt: Runtime, uuid: string, storage: Storage): Storage => {
    const tellOthers = async (keys: string[]) => {
      const others = [...live].filter((o) => o !== rt && o.client && o.mounts.has(uuid));
      if (others.length === 0) return;
      await Promise.all(
        others.flatMap((o) =>
          keys.map((key) => o.client!.invalidateKey(uuid, key, callTimeoutMs).catch((err: Error) => o.log.warn('invalidation during a switch failed', { mount_uuid: uuid, error: err.message }))),
        ),
      );
    };
    return {
      ...storage,
      put: async (key, value) => {
        await storage.put(key, value);
        await tellOthers([key]);
      },
      delete: async (key) => {
        await storage.delete(key);
        await tellOthers([key]);
      },
      batch: async (ops) => {
        await storage.batch(ops);
        await tellOthers(ops.map((o) => o.key));
      },
    };
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
      // glibc raises its mmap threshold after freeing a large block, and later large buffers (a
      // 30 MB request) come from its heap, which it rarely gives back: a fixed threshold keeps them
      // mapped on their own and unmapped when freed (the kv engine 60 s after large writes: about
      // 260 MB without, 77 MB with; issue 31). Other C libraries ignore it.
      MALLOC_MMAP_THRESHOLD_: '131072',
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
      rt.address = { socketPath, secret, version: rt.entry.version, builtin: false };
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
    if (rt.warming) {
      // A replacement that dies before it serves is not restarted: the switch fails and says why.
      ++rt.generation;
      rt.lastError = new StrongroomError('plugin_failed', `plugin ${rt.label} exited during warm-up (${how}); see the server log`);
      setState(rt, 'failed');
      return;
    }
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
    if (!live.has(rt)) return; // already (being) disposed: two mounts let go of it at once
    live.delete(rt);
    setState(rt, 'stopped');
    await stopProcess(rt, true);
    if (runtimes.get(rt.key) === rt) runtimes.delete(rt.key);
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

  /** Counts a call on this record until it settles, so a switch can wait for it. */
  const held = <T>(rec: MountRecord, call: () => Promise<T>): Promise<T> => {
    rec.inflight++;
    const settle = () => {
      if (--rec.inflight === 0 && rec.idle) rec.idle();
    };
    let p: Promise<T>;
    try {
      p = call();
    } catch (err) {
      settle();
      return Promise.reject(err);
    }
    return p.finally(settle);
  };

  /** The mount's backend: each call goes to the process serving the mount at that moment. */
  const proxy = (uuid: string, initial: Slot): Backend => {
    const now = () => slots.get(uuid) ?? initial;
    const via = <T>(fn: (c: transport.BackendClient) => Promise<T>): Promise<T> => {
      const { rt, rec } = now();
      return held(rec, () => {
        const c = clientFor(rt, rec);
        return c instanceof Promise ? c.then(fn) : fn(c);
      });
    };
    return {
      handleRequest: (req) => {
        const ttls = deps.callbacks.mountTtls?.(uuid);
        return via((c) => c.handleRequest(req, ttls));
      },
      existenceCheck: (req) => via((c) => c.existenceCheck(req)),
      specialPaths: () => now().rec.special,
      describe: () => now().rec.describe,
      invalidateKey: async (key) => {
        // During a switch the old process still answers its last calls: it hears of the change too.
        const current = now().rt;
        for (const o of live) if (o !== current && o.client && o.mounts.has(uuid)) await o.client.invalidateKey(uuid, key).catch(() => undefined);
        await via((c) => c.invalidateKey(uuid, key));
      },
      periodic: () => via((c) => c.periodic(uuid)),
      cleanup: () => api.unmount(uuid),
    };
  };

  // ------------------------------------------------------------------ switch

  const newRecord = (mount: MountInfo): MountRecord => ({
    mount,
    setupGen: 0,
    special: { unauthenticated: [], root: [] },
    describe: { help: '', paths: [], secretTypes: [] },
    setupError: null,
    callbacks: null,
    inflight: 0,
    idle: null,
  });

  /** Resolves once the calls made through `rec` are answered, or after `drainMs` (each call has its own deadline anyway). */
  const drained = (rec: MountRecord): Promise<void> => {
    if (rec.inflight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, drainMs);
      timer.unref();
      rec.idle = () => {
        clearTimeout(timer);
        rec.idle = null;
        resolve();
      };
    });
  };

  /** After a switch: the old process finishes the mount's calls in flight, runs its Cleanup, and stops once it serves nothing. */
  const release = async (rt: Runtime, uuid: string) => {
    const rec = rt.mounts.get(uuid);
    if (!rec) return;
    await drained(rec);
    if (rt.client && rt.state === 'running') {
      await rt.client.cleanup(uuid, Math.min(stopGraceMs, callTimeoutMs)).catch((err: Error) => rt.log.warn('cleanup failed', { mount_uuid: uuid, error: err.message }));
    }
    if (rt.mounts.get(uuid) === rec) rt.mounts.delete(uuid);
    if (rt.mounts.size === 0) await disposeRuntime(rt);
  };

  /**
   * Starts a fresh process of `entry` beside the serving ones and sets `mounts`
   * up on it: handshake, health, Setup and Describe of each. Any failure stops it
   * and throws why; nothing else has changed then.
   */
  const warmUp = async (entry: PluginEntry, mounts: MountInfo[]): Promise<Runtime> => {
    const rt = await createRuntime(entry, false);
    rt.warming = true;
    const gen = ++rt.generation;
    setState(rt, 'starting');
    try {
      await launch(rt, gen);
      // Each record is in place before its Setup: a write by the old process from now on reaches this one's cache.
      for (const m of mounts) rt.mounts.set(m.uuid, newRecord(m));
      for (const rec of rt.mounts.values()) {
        await setupMount(rt, rec, gen).catch((err: unknown) => {
          if (rt.lastError && (rt.state as State) === 'failed') throw rt.lastError;
          throw new StrongroomError('plugin_failed', `plugin ${rt.label} failed its Setup and Describe of "${rec.mount.path}": ${err instanceof Error ? err.message : String(err)}`);
        });
      }
      // Still alive and answering after the Setups: a crash during warm-up is caught here, not by the first request.
      if (rt.client) await rt.client.waitHealthy(startTimeoutMs);
      if (gen !== rt.generation || !rt.client) throw rt.lastError ?? crashedError(rt, 'during warm-up');
      rt.warming = false;
      rt.everRan = true;
      rt.lastError = null;
      setState(rt, 'running');
      rt.log.info('replacement plugin process ready', { pid: rt.child?.pid, mounts: mounts.length });
      return rt;
    } catch (err) {
      const e = rt.lastError && (rt.state as State) === 'failed' ? rt.lastError : err instanceof Error ? err : new Error(String(err));
      rt.log.error('replacement plugin process failed; the serving one stays', { error: e.message, stderr: rt.stderrTail });
      rt.warming = false;
      rt.mounts.clear();
      await disposeRuntime(rt);
      throw e instanceof StrongroomError ? e : new StrongroomError('plugin_failed', `plugin ${rt.label} failed to start: ${e.message}`);
    }
  };

  /** Points each mount of `from` at `to` (already set up), then lets `from` drain and stop. */
  const switchAll = async (from: Runtime, to: Runtime) => {
    const moved: string[] = [];
    for (const [uuid, rec] of to.mounts) {
      const slot = slots.get(uuid);
      if (slot && slot.rt !== from) {
        to.mounts.delete(uuid); // moved elsewhere meanwhile
        continue;
      }
      slots.set(uuid, { rt: to, rec });
      moved.push(uuid);
    }
    if (runtimes.get(from.key) === from) runtimes.set(from.key, to);
    // A mount added to `from` while `to` warmed up: set up on `to` too, or it would keep `from` running unseen.
    for (const [uuid, rec] of from.mounts) {
      if (to.mounts.has(uuid) || slots.get(uuid)?.rt !== from) continue;
      const late = newRecord(rec.mount);
      to.mounts.set(uuid, late);
      try {
        await setupMount(to, late, to.generation);
        slots.set(uuid, { rt: to, rec: late });
        moved.push(uuid);
      } catch (err) {
        to.mounts.delete(uuid);
        from.log.warn('a mount added during the reload stays on the old process', { mount_uuid: uuid, error: err instanceof Error ? err.message : String(err) });
      }
    }
    await Promise.all(moved.map((uuid) => release(from, uuid)));
    if (from.mounts.size === 0 && live.has(from)) await disposeRuntime(from);
  };

  /** Switches run one at a time (they are rare): two at once on one mount could leave a process serving it unseen. */
  let switchQueue: Promise<unknown> = Promise.resolve();
  const serially = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = switchQueue.then(fn, fn);
    switchQueue = run.catch(() => undefined);
    return run;
  };

  /** mount() for a mount another process serves: its plugin_version changed. */
  const switchMount = async (entry: PluginEntry, mount: MountInfo, prev: Slot): Promise<Backend> => {
    let rt = runtimes.get(keyOf(entry));
    if (rt?.state === 'degraded') throw degradedError(rt);
    let rec: MountRecord;
    if (rt && rt.state !== 'idle' && rt.state !== 'failed' && rt.state !== 'stopped') {
      // That version already runs for other mounts: the mount is set up on it.
      rec = newRecord(mount);
      rt.mounts.set(mount.uuid, rec);
      try {
        await waitRunning(rt, startTimeoutMs + callTimeoutMs);
        await setupMount(rt, rec, rt.generation);
      } catch (err) {
        if (rt.mounts.get(mount.uuid) === rec) rt.mounts.delete(mount.uuid);
        throw err;
      }
    } else {
      if (rt && rt.mounts.size === 0) await disposeRuntime(rt);
      rt = await warmUp(entry, [mount]);
      runtimes.set(rt.key, rt);
      rec = rt.mounts.get(mount.uuid)!;
    }
    const next = { rt, rec };
    slots.set(mount.uuid, next);
    await release(prev.rt, mount.uuid);
    return proxy(mount.uuid, next);
  };

  const reloadNow = async (type: PluginEntry['type'], name: string, version?: string): Promise<void> => {
    const targets = [...runtimes.values()].filter(
      (rt) => rt.entry.type === type && rt.entry.name === name && (version === undefined || rt.entry.version === version),
    );
    // Every replacement is warmed up before any mount moves: one that fails leaves all as they were.
    const ready = await Promise.allSettled(
      targets.map(async (rt) => {
        rt.log.info('reloading plugin');
        // Pick up a re-registered command or sha256 for the same pinned version.
        const fresh = (await deps.catalog.get(rt.entry.type, rt.entry.name, rt.entry.version)) ?? rt.entry;
        return warmUp(fresh, [...rt.mounts.values()].map((rec) => rec.mount));
      }),
    );
    const failed = ready.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      await Promise.all(ready.map((r) => (r.status === 'fulfilled' ? disposeRuntime(r.value) : undefined)));
      throw failed.reason;
    }
    await Promise.all(targets.map((rt, i) => switchAll(rt, (ready[i] as PromiseFulfilledResult<Runtime>).value)));
  };

  // ------------------------------------------------------------------ API

  const api: PluginSupervisor = {
    async mount(entry, mount) {
      const prev = slots.get(mount.uuid);
      if (prev && prev.rt !== runtimes.get(keyOf(entry))) {
        return serially(async () => {
          // Read again: a switch that ran before this one may have moved the mount already.
          const now = slots.get(mount.uuid);
          if (now && now.rt === runtimes.get(keyOf(entry))) return proxy(mount.uuid, now);
          return switchMount(entry, mount, now ?? prev);
        });
      }
      const rt = await runtimeFor(entry);
      if (rt.state === 'degraded') throw degradedError(rt);
      const rec = newRecord(mount);
      const slot = { rt, rec };
      rt.mounts.set(mount.uuid, rec);
      slots.set(mount.uuid, slot);
      failedMounts.delete(mount.uuid);
      try {
        if (rt.state === 'idle' || rt.state === 'failed') void startProcess(rt);
        await waitRunning(rt, startTimeoutMs + callTimeoutMs);
        if (rec.setupError) throw rec.setupError;
        if (rec.setupGen !== rt.generation) await setupMount(rt, rec, rt.generation);
        return proxy(mount.uuid, slot);
      } catch (err) {
        const e = err instanceof Error ? err : new Error(String(err));
        if (rt.mounts.get(mount.uuid) === rec) rt.mounts.delete(mount.uuid);
        if (slots.get(mount.uuid) === slot) slots.delete(mount.uuid);
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
      slots.delete(mountUuid);
      // Every process that holds the mount: normally one, two while a switch drains.
      for (const rt of [...live]) {
        if (!rt.mounts.has(mountUuid)) continue;
        if (rt.client && rt.state === 'running') {
          await rt.client.cleanup(mountUuid, Math.min(stopGraceMs, callTimeoutMs)).catch((err: Error) => {
            rt.log.warn('cleanup failed', { mount_uuid: mountUuid, error: err.message });
          });
        }
        rt.mounts.delete(mountUuid);
        if (rt.mounts.size === 0) await disposeRuntime(rt);
      }
    },

    reload: (type, name, version) => serially(() => reloadNow(type, name, version)),

    status(mountUuid) {
      if (failedMounts.has(mountUuid)) return 'failed';
      const slot = slots.get(mountUuid);
      if (!slot) return 'failed';
      switch (slot.rt.state) {
        case 'running':
          return slot.rec.setupError ? 'failed' : 'running';
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
      return slots.get(mountUuid)?.rt.child?.pid ?? null;
    },

    stats() {
      return [...runtimes.values()].map((rt) => ({ plugin: rt.entry.name, version: rt.entry.version, type: rt.entry.type, state: rt.state }));
    },

    async shutdown() {
      shuttingDownFlag = true;
      await Promise.all([...live].map((rt) => disposeRuntime(rt)));
      slots.clear();
      failedMounts.clear();
    },
  };
  return api;
}
