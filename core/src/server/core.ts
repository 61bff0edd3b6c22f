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
import { StrongroomError, badRequest, toOpenApi, type MountEnv } from '@strongroom/sdk-plugin/host';
import { createAuditBroker, type AuditBroker } from '../audit/broker.js';
import { createBarrier } from '../barrier/barrier.js';
import { forwardedClient, forwardingKey } from '../ha/forward.js';
import { DEFAULT_HA_TIMINGS, createHaManager, type HaManager, type HaTimings } from '../ha/ha-manager.js';
import { leaderStatus } from '../ha/leader.js';
import { createPostgresLock } from '../ha/postgres-lock.js';
import { createStandbyForwarding } from '../ha/standby.js';
import { createExpirationManager, type ExpirationManager } from '../expiration/index.js';
import { createListener, type Listener } from '../http/listener.js';
import type { ApiReply, ApiRequest } from '../http/types.js';
import type { CoreLogger } from '../log/logger.js';
import { createMetrics } from '../metrics/metrics.js';
import { observeRequests } from '../metrics/requests.js';
import { scrapeStateGauges } from '../metrics/state-gauges.js';
import { timedBarrier, timedPhysical } from '../metrics/timed-storage.js';
import { createEngineCalls } from '../mounts/engine-calls.js';
import { createMountManager, type MountBinding, type MountManager } from '../mounts/mount-manager.js';
import { createMountStorage } from '../mounts/mount-storage.js';
import { createRouter, mountInfoOf, mountTtls, routePath, type MountEntry } from '../mounts/mount-table.js';
import { createSystemViews } from '../mounts/system-view.js';
import { createNamespaceStore } from '../namespace/namespace-store.js';
import { createNamespaceRegistry, isDescendantNamespace, ROOT_NAMESPACE, type Namespace } from '../namespace/namespaces.js';
import { builtinPlugins, pluginRuntimeDirs } from '../plugins/builtins.js';
import { createPluginCatalog, type PluginCatalog } from '../plugins/catalog.js';
import { createPluginSupervisor, type PluginSupervisor } from '../plugins/supervisor.js';
import { createPasswordPolicyStore, type PasswordPolicyStore } from '../password-policy/store.js';
import { createAclCache } from '../policy/acl-cache.js';
import { createPolicyStore } from '../policy/policy-store.js';
import { createTokenAccess } from '../request/access.js';
import { createPipeline, type Pipeline } from '../request/pipeline.js';
import { createTokenPort } from '../request/token-port.js';
import { createGenerateRoot, createRekey } from '../seal/root-recovery.js';
import { createSealManager, parseSealConfig } from '../seal/seal-manager.js';
import { createInmemPhysical } from '../storage/inmem.js';
import { createLevelPhysical } from '../storage/level.js';
import type { Physical } from '../storage/physical.js';
import { createPostgresPhysical, type PostgresPhysical } from '../storage/postgresql.js';
import { createSystemBackend } from '../sys/backend.js';
import { leasePaths, revokeLeasePrefix } from '../sys/leases.js';
import { corsPaths, createCorsStore } from '../sys/cors.js';
import { createCors } from '../http/cors.js';
import { createNamespaceAdmin, type NamespaceAdmin } from '../sys/namespace-admin.js';
import { rootRecoveryPaths } from '../sys/root-recovery.js';
import { createNodeLocal } from '../sys/seal-paths.js';
import { wrappingPaths } from '../sys/wrapping.js';
import { createTokenAuthBackend } from '../token-auth/backend.js';
import { createTokenStore, type TokenStore } from '../token/index.js';
import { storedHmacKey, tokenKeys } from '../token/keys.js';
import { createResponseWrapping, type ResponseWrapping } from '../wrapping/response-wrapping.js';
import type { ServerConfig } from './server-config.js';

export const CORE_VERSION = '0.1.0';
const PERIODIC_MS = 60_000;

/** The mounts every namespace starts with: its sys/ and its token auth method. */
const DEFAULT_MOUNTS = () => [
  { table: 'mounts' as const, path: 'sys/', input: { type: 'system', description: 'system endpoints used for control, policy and debugging' }, system: true },
  { table: 'auth' as const, path: 'token/', input: { type: 'token', description: 'token based credentials' }, system: true },
];

interface Unsealed {
  passwordPolicies: PasswordPolicyStore;
  tokens: TokenStore;
  expiration: ExpirationManager;
  audit: AuditBroker;
  supervisor: PluginSupervisor;
  mounts: MountManager;
  pipeline: Pipeline;
  namespaceAdmin: NamespaceAdmin;
  periodic: NodeJS.Timeout;
  /** Signs (standby) and checks (active) the client address of forwarded requests. */
  forwardKey: Buffer;
}

export interface Core {
  listen(): Promise<Array<{ url: string }>>;
  handle(req: ApiRequest): Promise<ApiReply>;
  devInit(opts: { rootTokenId?: string | undefined }): Promise<{ unsealKey: string; rootToken: string }>;
  unsealWithKey(key: string): Promise<void>;
  shutdown(): Promise<void>;
}

export async function createCore(opts: { config: ServerConfig; logger: CoreLogger; haTimings?: Partial<HaTimings> }): Promise<Core> {
  const { config, logger } = opts;
  const metrics = createMetrics({ disableHostname: config.telemetry.disableHostname });
  const storage = config.storage;
  let pg: PostgresPhysical | null = null;
  const rawPhysical: Physical =
    storage.type === 'inmem'
      ? createInmemPhysical()
      : storage.type === 'postgresql'
        ? (pg = createPostgresPhysical({ connectionUrl: storage.connectionUrl, table: storage.table, haTable: storage.haTable, maxParallel: storage.maxParallel, logger }))
        : await createLevelPhysical({ path: storage.path });
  const physical = timedPhysical(rawPhysical, metrics);
  const barrier = timedBarrier(createBarrier(physical), metrics);
  const seal = createSealManager({ physical, barrier, clusterName: config.clusterName, storageType: storage.type, version: CORE_VERSION, log: logger.named('seal') });
  const namespaces = createNamespaceRegistry();
  const router = createRouter<MountBinding>();
  const aclCache = createAclCache();
  // Lives as long as the process: the listener applies it, sealed or not (Vault's behaviour).
  const cors = createCors();
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
  const ha: HaManager | null =
    pg && storage.type === 'postgresql' && storage.haEnabled
      ? createHaManager({
          lock: createPostgresLock({ physical: pg, identity: haIdentity, value: config.apiAddr, ttlMs: opts.haTimings?.ttlMs ?? DEFAULT_HA_TIMINGS.ttlMs }),
          selfAddress: config.apiAddr,
          // Another node may have rotated the keyring and written anything: re-read both before serving.
          onActive: async () => {
            await barrier.refresh();
            await postUnseal({ restoreLeasesInBackground: false });
            // A node taking over has leases due (or overdue) from the old active node: load them all before serving.
            const restored = await state!.expiration.restore();
            if (restored.failed) {
              logger.warn('lease restore stopped by a storage error during takeover; resuming in the background', { loaded: restored.loaded });
              void state!.expiration.restore().catch((err: unknown) => logger.error('lease restore failed', { error: String(err) }));
            }
          },
          onStandby: preSeal,
          logger: logger.named('ha'),
          ...(opts.haTimings ? { timings: opts.haTimings } : {}),
        })
      : null;
  const standby = ha ? createStandbyForwarding({ ha, readHmacKey: () => storedHmacKey(barrier) }) : null;
  /** A namespace as a metric label: its path, "root", or its id once it is gone. */
  const namespaceLabel = (id: string) => namespaces.byId(id || ROOT_NAMESPACE.id)?.path || (id === 'root' || id === '' ? 'root' : id);
  scrapeStateGauges(metrics, { unsealed: () => state, sealed: () => barrier.sealed, ha, namespaceLabel });
  const mountStorage = createMountStorage({ store: barrier, router, namespaces });
  const systemViewFor = createSystemViews({ router, namespaces, ttls: ttlsOf, passwordPolicies: () => state?.passwordPolicies ?? null, plugins: () => plugins, version: CORE_VERSION });
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

  async function postUnseal(opts: { restoreLeasesInBackground: boolean } = { restoreLeasesInBackground: true }): Promise<void> {
    const started = Date.now();
    const { hmacKey, batchKey } = await tokenKeys(barrier);
    const policies = createPolicyStore({ store: barrier, namespaces });
    await policies.ensureDefault(namespaces.byId('root')!);
    const namespaceStore = createNamespaceStore({ store: barrier, registry: namespaces });
    await namespaceStore.load();
    const passwordPolicies = createPasswordPolicyStore({ store: barrier, namespaces });
    const corsStore = createCorsStore(barrier, cors);
    await corsStore.load();
    const audit = createAuditBroker({ store: barrier, logger: logger.named('audit'), onDeviceFailure: (path) => metrics.auditFailures.inc({ device: path }) });
    await audit.load();
    const catalog = createPluginCatalog({ store: barrier, pluginDirectory: config.pluginDirectory, builtins: builtinPlugins() });
    const supervisor = createPluginSupervisor({ catalog, logger: logger.named('plugins'), callbacks: { storageFor: mountStorage.storageFor, systemViewFor }, runDir, runtimeDirs: pluginRuntimeDirs(), isStopping: () => stopping, onRestart: (plugin, version) => metrics.pluginRestarts.inc({ plugin, version }) });
    plugins = { catalog, supervisor };
    const expiration: ExpirationManager = createExpirationManager({
      store: barrier,
      logger: logger.named('expiration'),
      events: {
        revoked: (mount, expired, ns) => {
          metrics.leaseRevocations.inc({ mount, namespace: namespaceLabel(ns) });
          if (expired) metrics.leaseExpirations.inc({ mount, namespace: namespaceLabel(ns) });
        },
        irrevocable: (mount, ns) => metrics.leaseIrrevocable.inc({ mount, namespace: namespaceLabel(ns) }),
      },
      mountTtls: (uuid) => ttlsOf(router.byUuid(uuid)?.entry),
      tokenExists: (key) => tokens.isLiveKey(key),
      isDescendantNamespace: (ancestorId, candidateId) => isDescendantNamespace(namespaces, ancestorId, candidateId),
      options: {
        ...(config.leaseRevocation.retryBaseMs !== undefined ? { retryBaseMs: config.leaseRevocation.retryBaseMs } : {}),
        ...(config.leaseRevocation.maxAttempts !== undefined ? { maxRevokeAttempts: config.leaseRevocation.maxAttempts } : {}),
      },
      revoker: engineCalls.revoker,
    });
    const tokens: TokenStore = createTokenStore({
      store: barrier,
      hmacKey,
      batchKey,
      systemDefaultTtl: system.defaultTtl,
      systemMaxTtl: system.maxTtl,
      leases: { revokeByToken: async (k) => void (await expiration.revokeByToken(k)) },
      onDestroy: async (e) => {
        if (wrapping.isWrappingToken(e)) await wrapping.forget(e.key);
      },
      renewLogin: engineCalls.renewLogin,
      logger,
    });
    const wrapping: ResponseWrapping = createResponseWrapping({ store: barrier, tokens, maxTtl: system.maxTtl });
    await tokens.startExpiry();
    const access = createTokenAccess({ policies, namespaces, aclCache, tokens });

    const mounts: MountManager = createMountManager({
      store: barrier,
      router,
      namespaces,
      logger,
      revokeLeases: async (entry, ns) => void (await revokeLeasePrefix({ expiration, tokens }, ns.id, routePath(entry), { sync: true })),
      onDisable: async (entry, ns) => {
        await supervisor.unmount(entry.uuid).catch(() => undefined);
        await mountStorage.wipe(entry, ns);
      },
      resolve: async (entry, ns) => {
        const env: MountEnv = { mount: mountInfoOf(entry, ns.path), storage: mountStorage.storageFor(entry.uuid), system: systemViewFor(entry.uuid), logger: logger.child({ mount: routePath(entry) }) };
        const builtin = `v${CORE_VERSION}+builtin`;
        if (entry.type === 'system') {
          const backend = await createSystemBackend(
            {
              namespaces,
              policies,
              passwordPolicies,
              audit,
              metrics,
              prometheusRetentionTime: config.telemetry.prometheusRetentionTime,
              logger,
              capabilities: access.capabilities,
              catalog: {
                list: (type) => catalog.list(type),
                get: (type, name, version) => catalog.get(type, name, version),
                register: (e) => catalog.register(e),
                remove: (type, name, version) => catalog.remove(type, name, version),
                reload: async (name) => {
                  const types = new Set(router.entries().filter((e) => e.type === name).map((e) => (e.table === 'auth' ? ('auth' as const) : ('secret' as const))));
                  for (const t of types.size ? types : new Set(['secret' as const])) await supervisor.reload(t, name);
                  await mounts.rebind((e) => e.type === name);
                },
              },
              seal: () => seal.seal(),
              rotate: () => barrier.rotate(),
              keyStatus: () => {
                const k = barrier.keyStatus();
                return { term: k.term, install_time: k.installTime.toISOString(), encryptions: k.encryptions };
              },
              openapi: async (n: Namespace) =>
                toOpenApi(
                  router.entries(n.id).flatMap((e) => {
                    const description = router.byUuid(e.uuid)?.handle.description;
                    return description ? [{ prefix: routePath(e), description }] : [];
                  }),
                  { title: 'Strongroom API', version: CORE_VERSION },
                ),
              node: { clusterName: config.clusterName, clusterId: () => '', apiAddr: config.apiAddr, version: CORE_VERSION },
              // Answered first, then done: stepping down tears down the pipeline serving this very request.
              stepDown: async () => void (ha ? setImmediate(() => void ha.stepDown().catch((err: unknown) => logger.error('step-down failed', { error: String(err) }))) : undefined),
              mounts,
              namespaceAdmin,
              extraPaths: [
                ...nodeLocal.paths,
                ...leasePaths({ expiration, namespaces, logger, tokens }),
                ...wrappingPaths({ wrapping }),
                ...corsPaths({ cors, store: corsStore }),
                // Attempts live as long as this unsealed state: sealing ends them.
                ...rootRecoveryPaths({
                  generateRoot: createGenerateRoot({ seal, createRootToken: async () => (await tokens.createRoot()).id }),
                  rekey: createRekey({ seal, parseConfig: parseSealConfig }),
                }),
              ],
            },
            { rootNamespace: ns.id === ROOT_NAMESPACE.id },
          ).create(env);
          return { backend, description: backend.describe(), runningVersion: builtin };
        }
        if (entry.type === 'token') {
          const backend = await createTokenAuthBackend({ tokens, namespaceIdOf: (p) => namespaces.byPath(p)?.id ?? 'root' }).create(env);
          return { backend, description: backend.describe(), runningVersion: builtin };
        }
        const kind = entry.table === 'auth' ? 'auth' : 'secret';
        const plugin = await catalog.get(kind, entry.type, entry.plugin_version || undefined);
        if (!plugin) {
          throw badRequest(entry.plugin_version ? `plugin ${kind}/${entry.type} version ${entry.plugin_version} is not registered` : `unknown ${kind === 'auth' ? 'auth method' : 'secrets engine'} type "${entry.type}"`);
        }
        const backend = await supervisor.mount(plugin, env.mount);
        return { backend, description: backend.describe(), runningVersion: plugin.version };
      },
    });

    const pipeline = createPipeline({ namespaces, router, logger, metrics, audit, wrapping, tokens: createTokenPort(tokens, ttlsOf), acl: access.acl, leases: expiration });
    const namespaceAdmin = createNamespaceAdmin({ registry: namespaces, store: namespaceStore, storage: barrier, mounts, defaultMounts: DEFAULT_MOUNTS, policies, leases: expiration, tokens, logger });
    await mounts.load(DEFAULT_MOUNTS);
    namespaceAdmin.resumeDeletions();

    // Lease restore runs in the background after an unseal: requests are served meanwhile (an HA takeover awaits it).
    if (opts.restoreLeasesInBackground) void expiration.restore().catch((err: unknown) => logger.error('lease restore failed', { error: String(err) }));
    const periodic = setInterval(() => {
      for (const e of router.entries()) {
        const b = router.byUuid(e.uuid)?.handle.backend;
        if (b) b.periodic().catch((err: unknown) => logger.warn('periodic function failed', { mount: routePath(e), error: String(err) }));
      }
    }, PERIODIC_MS);
    periodic.unref();

    state = { passwordPolicies, tokens, expiration, audit, supervisor, mounts, pipeline, periodic, forwardKey: forwardingKey(hmacKey), namespaceAdmin };
    logger.info('unsealed', { ms: Date.now() - started });
  }

  async function preSeal(): Promise<void> {
    const s = state;
    state = null;
    plugins = null;
    if (!s) return;
    clearInterval(s.periodic);
    await s.namespaceAdmin.idle();
    s.expiration.stop();
    s.tokens.stop();
    await s.mounts.unloadAll();
    await s.supervisor.shutdown();
    await s.audit.close();
    aclCache.clear();
    // Namespaces are read again at the next unseal.
    for (const ns of namespaces.all()) namespaces.remove(ns.id);
  }

  seal.onInit(async () => {
    // The root token is made while init holds the barrier open; it is returned once, never stored in plain.
    const tokens = createTokenStore({ store: barrier, ...(await tokenKeys(barrier)), systemDefaultTtl: system.defaultTtl, systemMaxTtl: system.maxTtl, leases: { revokeByToken: async () => undefined }, logger });
    pendingRootToken = (await tokens.createRoot(pendingRootToken ?? undefined)).id;
    tokens.stop();
  });
  if (ha && pg) {
    const fenced = pg;
    seal.onUnseal(async () => {
      // From the first unseal on, this node writes only while it holds the lock (init, before it, writes unfenced).
      fenced.fence(haIdentity);
      await ha.start();
    });
    seal.onSeal(async () => {
      await ha.stop();
      standby?.forget();
    });
  } else {
    seal.onUnseal(() => postUnseal());
    seal.onSeal(preSeal);
  }

  async function dispatch(req: ApiRequest): Promise<ApiReply> {
    if (nodeLocal.handles(req)) return nodeLocal.serve(req);
    if (standby && !barrier.sealed && ha?.state !== 'active') return standby.forward(req);
    const s = state;
    if (!s) throw new StrongroomError('unavailable', 'Vault is sealed');
    // A request forwarded by a standby carries its client's address, signed by that node.
    return s.pipeline.handle(req, { remoteAddress: (ha && forwardedClient(req, s.forwardKey)) || req.remoteAddress });
  }
  const handle = observeRequests(dispatch, { metrics, log: logger.named('request'), level: config.logRequestsLevel ?? 'debug', namespaces, router, sealPath: nodeLocal.sealPath });

  return {
    handle,
    async listen() {
      listeners = config.listeners.map((l) => createListener({ address: l.address, tls: l.tls, maxRequestSize: l.maxRequestSize, requireRequestHeader: l.requireRequestHeader }, handle, { logger, cors }));
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
    async shutdown() {
      stopping = true;
      await Promise.allSettled(listeners.map((l) => l.close()));
      // An HA node releases the lock on the way out, so a standby takes over at once instead of after its TTL.
      if (ha) await ha.stop();
      else if (state) await preSeal();
      standby?.close();
      await physical.close();
      rmSync(runDir, { recursive: true, force: true });
    },
  };
}
