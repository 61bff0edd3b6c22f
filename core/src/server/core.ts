/**
 * The composition root: builds the kernel from its parts and runs the seal
 * lifecycle. While sealed, only the node-local paths answer (sys/init,
 * sys/unseal, sys/seal-status, sys/health, sys/leader); on unseal the policy
 * store, token store, expiration manager, audit devices, plugin catalog and
 * supervisor are created and the mount tables are bound (plugins start in the
 * background, never blocking unseal); on seal all of it is torn down and
 * every key leaves memory. The parts live in their modules; this file only
 * wires them.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StrongroomError } from '@strongroom/sdk-plugin/host';
import { createBarrier } from '../barrier/barrier.js';
import { CUBBYHOLE_MOUNT_PATH, CUBBYHOLE_TYPE } from '../cubbyhole/cubbyholes.js';
import { createReplayGuard, verifyForwarded } from '../ha/forward.js';
import { createHaManager, haTimingsFor, type HaManager, type HaTimings } from '../ha/ha-manager.js';
import { leaderStatus } from '../ha/leader.js';
import { invalidateKeys } from '../ha/invalidation.js';
import { createStandbyForwarding } from '../ha/standby.js';
import { createStandbyGuard } from '../ha/standby-guard.js';
import { createWarmStandby, type WarmStandby } from '../ha/warm-standby.js';
import { createEventHub, DEFAULT_EVENT_OPTIONS } from '../events/hub.js';
import { createListener, type Listener } from '../http/listener.js';
import type { ApiReply, ApiRequest } from '../http/types.js';
import type { CoreLogger } from '../log/logger.js';
import { createMetrics } from '../metrics/metrics.js';
import { observeRequests } from '../metrics/requests.js';
import { scrapeStateGauges } from '../metrics/state-gauges.js';
import { timedBarrier, timedPhysical } from '../metrics/timed-storage.js';
import { createEngineCalls } from '../mounts/engine-calls.js';
import type { MountBinding } from '../mounts/mount-manager.js';
import { createMountStorage } from '../mounts/mount-storage.js';
import { createRouter, mountTtls, type MountEntry } from '../mounts/mount-table.js';
import { createSystemViews } from '../mounts/system-view.js';
import { createNamespaceRegistry, ROOT_NAMESPACE } from '../namespace/namespaces.js';
import type { PluginCatalog } from '../catalog/catalog.js';
import type { PluginSupervisor } from '../supervisor/supervisor.js';
import { createAclCache } from '../policy/acl-cache.js';
import { createSealManager } from '../seal/seal-manager.js';
import { createSnapshots, type StagedRestore } from '../snapshot/snapshots.js';
import { openStorage } from '../storage/registry.js';
import { createCors } from '../http/cors.js';
import { builtUiDirectory } from '../http/ui.js';
import { createNodeLocal } from '../sys/seal-paths.js';
import { SNAPSHOT_RESTORE_URL } from '../sys/snapshot.js';
import { unauthedRootRecoveryGate } from '../sys/root-recovery.js';
import { createTokenStore } from '../token/index.js';
import { storedHmacKey, tokenKeys } from '../token/keys.js';
import type { ServerConfig } from './server-config.js';
import { createInFlight } from './in-flight.js';
import { teardown, unseal, type Unsealed, type UnsealContext } from './unsealed.js';

const CORE_VERSION = '0.1.0';
/** How long a snapshot restore waits for the requests in flight to finish before it gives up (changing nothing). */
const RESTORE_DRAIN_MS = 60_000;

/** The mounts every namespace starts with: its sys/, its cubbyhole and its token auth method. */
const DEFAULT_MOUNTS = () => [
  { table: 'mounts' as const, path: 'sys/', input: { type: 'system', description: 'system endpoints used for control, policy and debugging' }, system: true },
  // Local, as in Vault: a token's cubbyhole is never replicated.
  { table: 'mounts' as const, path: CUBBYHOLE_MOUNT_PATH, input: { type: CUBBYHOLE_TYPE, description: 'per-token private secret storage', local: true }, system: true },
  { table: 'auth' as const, path: 'token/', input: { type: 'token', description: 'token based credentials' }, system: true },
];

export interface Core {
  listen(): Promise<Array<{ url: string }>>;
  handle(req: ApiRequest): Promise<ApiReply>;
  devInit(opts: { rootTokenId?: string | undefined }): Promise<{ unsealKey: string; rootToken: string }>;
  unsealWithKey(key: string): Promise<void>;
  /** With a static seal, unseals from the stored key (a SealKeyError stops the server); otherwise nothing. */
  autoUnseal(): Promise<void>;
  shutdown(): Promise<void>;
}

export async function createCore(opts: { config: ServerConfig; logger: CoreLogger; haTimings?: Partial<HaTimings> }): Promise<Core> {
  const { config, logger } = opts;
  const metrics = createMetrics({ disableHostname: config.telemetry.disableHostname, prefix: config.telemetry.metricsPrefix });
  const storage = config.storage;
  const opened = await openStorage(storage, { logger });
  // A standby refuses every write here, before the database: the request that tried goes to the active node (ha/standby.ts).
  const guard = createStandbyGuard();
  const physical = guard.wrap(timedPhysical(opened.physical, metrics));
  const barrier = timedBarrier(createBarrier(physical), metrics);
  const sealLog = logger.named('seal');
  for (const w of config.seal?.warnings ?? []) sealLog.warn(w);
  const seal = createSealManager({ physical, barrier, clusterName: config.clusterName, storageType: storage.type, version: CORE_VERSION, log: sealLog, ...(config.seal ? { staticSeal: config.seal } : {}) });
  const snapshots = createSnapshots({ physical, barrier, storageType: storage.type, haEnabled: opened.haLock !== undefined, logger, metrics });
  const stopSchedule = config.snapshot ? snapshots.schedule(config.snapshot) : null;
  const namespaces = createNamespaceRegistry();
  const router = createRouter<MountBinding>();
  const aclCache = createAclCache();
  // Lives as long as the process: its log outlives a seal or a step-down, so a subscriber that
  // reconnects (to this node or, through a standby, to it) resumes with Last-Event-ID.
  const events = createEventHub({
    ...DEFAULT_EVENT_OPTIONS,
    ...config.events,
    onPublish: (type) => metrics.eventsPublished.inc({ event_type: type }),
    onDrop: (n) => metrics.eventsDropped.inc(n),
  });
  metrics.onScrape(() => {
    const st = events.stats();
    metrics.eventSubscribers.set(st.subscribers);
    metrics.eventQueueMax.set(st.maxQueued);
  });
  // Lives as long as the process: the listener applies it, sealed or not (Vault's behaviour).
  const cors = createCors();
  const inFlightRequests = createInFlight();
  const runDir = mkdtempSync(join(tmpdir(), 'strongroom-run-'));
  const system = { defaultTtl: config.defaultLeaseTtl || 32 * 24 * 3600, maxTtl: config.maxLeaseTtl || 32 * 24 * 3600 };
  const ttlsOf = (entry: MountEntry | undefined) => mountTtls(entry, system);
  let state: Unsealed | null = null;
  /** Set as soon as they exist during unseal: plugins may call back before `state` is complete. */
  let plugins: { catalog: PluginCatalog; supervisor: PluginSupervisor } | null = null;
  let pendingRootToken: string | null = null;
  let listeners: Listener[] = [];
  /** Set when shutdown() starts: plugin processes exiting from then on are stopping, not crashing. */
  let stopping = false;
  const haIdentity = randomUUID();
  const haLock = opened.haLock?.({ identity: haIdentity, value: config.apiAddr });
  const haTimings = { ...haTimingsFor(opened.haLockTtlMs ?? 5_000), ...opts.haTimings };
  const ha: HaManager | null =
    haLock
      ? createHaManager({
          lock: haLock,
          selfAddress: config.apiAddr,
          onActive: async () => {
            // A warm standby's state is current once it applied the rest of the feed: activate it, no reload.
            const warm = (await warmStandby?.promote()) ?? false;
            guard.readOnly = false;
            if (warm && state) return state.activate({ restoreLeasesInBackground: false });
            // Otherwise another node may have rotated the keyring and written anything: re-read both before serving.
            if (state) await preSeal();
            await barrier.refresh();
            await postUnseal({ restoreLeasesInBackground: false });
          },
          onStandby: async () => {
            guard.readOnly = true;
            await preSeal();
            if (!sealing && !stopping) warmStandby?.start();
          },
          logger: logger.named('ha'),
          timings: haTimings,
        })
      : null;
  const standby = ha ? createStandbyForwarding({ ha, readHmacKey: () => storedHmacKey(barrier), guard, count: (outcome) => metrics.haStandbyRequests.inc({ outcome }) }) : null;
  /** Set while sealing: a node leaving the cluster does not build a standby state again. */
  let sealing = false;
  // Standby reads (on unless disable_standby_reads): a standby builds the state and follows the change feed.
  const warmStandby: WarmStandby | null =
    ha && opened.changes && !config.disableStandbyReads
      ? createWarmStandby({
          feed: opened.changes,
          refreshBarrier: () => barrier.refresh(),
          build: () => postUnseal({ restoreLeasesInBackground: false, standby: true }),
          teardown: preSeal,
          invalidate: (keys) => {
            const s = state;
            if (!s) return Promise.resolve({ rebuild: false });
            return invalidateKeys(keys, { barrier, policies: s.policies, passwordPolicies: s.passwordPolicies, tokens: s.tokens, quotas: s.quotas, backendOf: (uuid) => router.byUuid(uuid)?.handle.backend ?? undefined });
          },
          logger: logger.named('ha'),
        })
      : null;
  /** A namespace as a metric label: its path, "root", or its id once it is gone. */
  const namespaceLabel = (id: string) => namespaces.byId(id || ROOT_NAMESPACE.id)?.path || (id === 'root' || id === '' ? 'root' : id);
  scrapeStateGauges(metrics, { unsealed: () => state, sealed: () => barrier.sealed, ha, namespaceLabel });
  const mountStorage = createMountStorage({ store: barrier, router, namespaces });
  const systemViewFor = createSystemViews({ router, namespaces, events, ttls: ttlsOf, passwordPolicies: () => state?.passwordPolicies ?? null, plugins: () => plugins, version: CORE_VERSION });
  const engineCalls = createEngineCalls({ router, namespaces });
  const nodeLocal = await createNodeLocal({
    seal,
    async init(request) {
      pendingRootToken = null;
      const result = await seal.init(request);
      const rootToken = pendingRootToken;
      pendingRootToken = null;
      return { ...result, root_token: rootToken };
    },
    node: () => ({ sealed: barrier.sealed, standby: !barrier.sealed && ha !== null && ha.state !== 'active' }),
    leader: () => leaderStatus(ha, config.apiAddr),
    clusterName: config.clusterName,
    version: CORE_VERSION,
  });

  const unsealContext: UnsealContext = {
    config, logger, metrics, barrier, seal, ha, namespaces, router, aclCache, cors, mountStorage, systemViewFor, engineCalls, system, ttlsOf, namespaceLabel, events,
    nodeLocalPaths: nodeLocal.paths,
    inFlight: inFlightRequests,
    defaultMounts: DEFAULT_MOUNTS,
    runDir,
    snapshots,
    version: CORE_VERSION,
    isStopping: () => stopping,
    onPlugins: (p) => void (plugins = p),
  };

  async function postUnseal(o: { restoreLeasesInBackground: boolean; standby?: boolean } = { restoreLeasesInBackground: true }): Promise<void> {
    state = await unseal(unsealContext, o);
  }

  async function preSeal(): Promise<void> {
    const s = state;
    state = null;
    plugins = null;
    if (s) await teardown(unsealContext, s);
  }

  seal.onInit(async () => {
    // The root token is made while init holds the barrier open; it is returned once, never stored in plain.
    const tokens = createTokenStore({ store: barrier, ...(await tokenKeys(barrier)), systemDefaultTtl: system.defaultTtl, systemMaxTtl: system.maxTtl, leases: null, logger });
    pendingRootToken = (await tokens.createRoot(pendingRootToken ?? undefined)).id;
  });
  if (ha && haLock) {
    seal.onUnseal(async () => {
      // From the first unseal on, this node writes only while it holds the lock (init, before it, writes unfenced).
      haLock.fenceWrites();
      // Until it holds the lock this node writes nothing (ha/standby-guard.ts).
      guard.readOnly = true;
      await ha.start();
      if (ha.state === 'standby') warmStandby?.start();
    });
    seal.onSeal(async () => {
      sealing = true;
      try {
        await warmStandby?.stop();
        await ha.stop();
      } finally {
        sealing = false;
      }
      standby?.forget();
    });
  } else {
    seal.onUnseal(() => postUnseal());
    seal.onSeal(preSeal);
  }

  /** Set while a snapshot restore has stopped serving (node-local paths still answer). */
  let restoring = false;

  /**
   * Applies a verified restore once its request's reply is ready: no new request
   * is served, those in flight finish, the unsealed state is torn down, the
   * backend replaces its entries all-or-nothing, and the state is built again
   * from the restored storage (this barrier's snapshot), or the server seals
   * (another barrier's, whose unseal keys open it now).
   */
  async function applyRestore(staged: StagedRestore, requestId: string): Promise<void> {
    restoring = true;
    try {
      const deadline = Date.now() + RESTORE_DRAIN_MS;
      while (inFlightRequests.othersThan(requestId) > 0) {
        if (Date.now() > deadline) throw new StrongroomError('unavailable', 'snapshot restore: requests still in flight after 60 s; nothing was changed');
        await new Promise((r) => setTimeout(r, 10));
      }
      const log = logger.named('snapshot');
      log.info('snapshot restore: applying', { entries: staged.entries, same_barrier: staged.sameBarrier });
      await preSeal();
      try {
        await snapshots.apply(staged);
      } catch (err) {
        // The backend left the old entries (PostgreSQL) or finishes at its next open (LevelDB, which refuses until then): seal.
        log.error('snapshot restore failed while applying; sealing', { error: err instanceof Error ? err.message : String(err) });
        seal.storageReplaced();
        await seal.seal();
        throw err;
      }
      seal.storageReplaced();
      if (staged.sameBarrier) {
        try {
          await barrier.refresh();
          await postUnseal();
        } catch (err) {
          log.error('snapshot restore: the restored state did not load; sealing', { error: err instanceof Error ? err.message : String(err) });
          await seal.seal();
          throw err;
        }
        log.info('snapshot restore: applied; state reloaded from the snapshot');
      } else {
        await seal.seal();
        log.warn("snapshot restore: applied another barrier's snapshot; sealed: unseal with that barrier's keys");
      }
    } finally {
      restoring = false;
    }
  }

  /** Nonces of the forwarded requests this node accepted, remembered for the skew window. */
  const forwardedReplays = createReplayGuard();
  async function dispatch(req: ApiRequest): Promise<ApiReply> {
    if (nodeLocal.handles(req)) return nodeLocal.serve(req);
    if (restoring) throw new StrongroomError('unavailable', 'a snapshot restore is in progress');
    if (standby && !barrier.sealed && ha?.state !== 'active') {
      if (req.bodyStream) throw new StrongroomError('bad_request', 'a snapshot restore must be sent to the active node');
      const follower = warmStandby?.follower ?? null;
      const s = state;
      if (!warmStandby || ha?.state !== 'standby') return standby.forward(req);
      return standby.serve(req, s && follower ? (r) => s.pipeline.handle(r, { remoteAddress: r.remoteAddress }) : null, follower);
    }
    const s = state;
    if (!s) throw new StrongroomError('unavailable', 'Vault is sealed');
    // A request forwarded by a standby carries its client's address, signed by that node with the
    // whole request; one that does not verify, or was seen before, is refused (ha/forward.ts).
    const forwarded = ha ? verifyForwarded(req, { key: s.forwardKey, self: config.apiAddr ?? '', replays: forwardedReplays }) : null;
    if (forwarded && 'refused' in forwarded) {
      logger.named('ha').warn('refused a forwarded request', { reason: forwarded.refused, remote_address: req.remoteAddress });
      throw new StrongroomError('permission_denied', `forwarded request refused: ${forwarded.refused}`);
    }
    // A request that committed a change answers with the feed's number (X-Service-Index): a read sent
    // with it to a standby is served once that standby applied it (a concurrent write may set it on a read: harmless).
    const before = opened.changes?.lastWritten() ?? 0;
    let reply: ApiReply;
    try {
      reply = await s.pipeline.handle(req, { remoteAddress: forwarded?.client ?? req.remoteAddress });
    } catch (err) {
      snapshots.finish(req.id, snapshots.take(req.id));
      throw err;
    }
    const staged = snapshots.take(req.id);
    if (staged) {
      try {
        await applyRestore(staged, req.id);
      } finally {
        snapshots.finish(req.id, staged);
      }
    }
    const after = opened.changes?.lastWritten() ?? 0;
    return after > before ? { ...reply, headers: { ...reply.headers, 'X-Service-Index': String(after), 'X-Vault-Index': String(after) } } : reply;
  }
  const observe = (h: (req: ApiRequest) => Promise<ApiReply>) => inFlightRequests.track(observeRequests(h, { metrics, log: logger.named('request'), level: config.logRequestsLevel ?? 'debug', namespaces, router, sealPath: nodeLocal.sealPath }));
  const handle = observe(dispatch);
  /** A listener's handler: with its refusals of the unauthenticated root recovery paths, if it has any. */
  const handlerFor = (l: ServerConfig['listeners'][number]) => {
    const gate = unauthedRootRecoveryGate(l);
    const metricsOpen = l.unauthenticatedMetricsAccess === true;
    if (!gate && !metricsOpen) return handle;
    return observe(async (req) => {
      gate?.(req);
      return dispatch(metricsOpen ? { ...req, unauthenticatedMetricsAccess: true } : req);
    });
  };

  return {
    handle,
    async listen() {
      const uiDirectory = config.ui ? builtUiDirectory() : null;
      // A config file's `ui = true` was checked at load; a dev server without a built UI still serves the API.
      if (config.ui && !uiDirectory) logger.warn('the web UI is not built (ui/dist is missing: run npm install); serving the API only');
      listeners = config.listeners.map((l) =>
        createListener({ address: l.address, tls: l.tls, maxRequestSize: l.maxRequestSize, requireRequestHeader: l.requireRequestHeader, uiDirectory }, handlerFor(l), {
          logger,
          cors,
          streamedUpload: (url) => SNAPSHOT_RESTORE_URL.test(url),
        }),
      );
      const bound = await Promise.all(listeners.map((l) => l.start()));
      return bound.map((b, i) => ({ url: `${config.listeners[i]!.tls ? 'https' : 'http'}://${b.host.includes(':') ? `[${b.host}]` : b.host}:${b.port}` }));
    },
    async devInit({ rootTokenId }) {
      pendingRootToken = rootTokenId ?? null;
      const result = await seal.initDev();
      const rootToken = pendingRootToken!;
      pendingRootToken = null;
      await state!.mounts.enable('mounts', namespaces.byId('root')!, 'secret/', { type: 'kv', options: { version: '2' }, description: 'key/value secret storage' });
      return { unsealKey: result.keys_base64[0]!, rootToken };
    },
    async unsealWithKey(key) {
      await seal.submitUnsealKey(key);
    },
    async autoUnseal() {
      await seal.autoUnseal();
    },
    async shutdown() {
      stopping = true;
      stopSchedule?.();
      await Promise.allSettled(listeners.map((l) => l.close()));
      // An HA node releases the lock on the way out, so a standby takes over at once instead of after its TTL.
      if (ha) {
        await warmStandby?.stop();
        await ha.stop();
      } else if (state) await preSeal();
      standby?.close();
      await physical.close();
      rmSync(runDir, { recursive: true, force: true });
    },
  };
}
