/**
 * What an unseal builds and a seal tears down: the policy, token and
 * password-policy stores, the expiration manager, audit devices, the plugin
 * catalog and supervisor, the mount tables bound to their backends (sys/ and
 * auth/token/ in process, engines as plugin processes) and the request
 * pipeline over them. The parts that live as long as the process come in
 * `UnsealContext` (core.ts).
 */
import { badRequest, toOpenApi, type MountEnv } from '@strongroom/sdk-plugin/host';
import { createAuditBroker, type AuditBroker } from '../audit/broker.js';
import type { Barrier } from '../barrier/barrier.js';
import { createCubbyholeBackend } from '../cubbyhole/backend.js';
import { createCubbyholes, CUBBYHOLE_TYPE } from '../cubbyhole/cubbyholes.js';
import { coreEvents } from '../events/core-events.js';
import type { EventHub } from '../events/hub.js';
import { createExpirationManager, type ExpirationManager } from '../expiration/index.js';
import { forwardingKey } from '../ha/forward.js';
import type { HaManager } from '../ha/ha-manager.js';
import type { Cors } from '../http/cors.js';
import type { CoreLogger } from '../log/logger.js';
import type { InFlight } from './in-flight.js';
import type { Metrics } from '../metrics/metrics.js';
import type { EngineCalls } from '../mounts/engine-calls.js';
import { createMountManager, type DefaultMounts, type MountBinding, type MountManager } from '../mounts/mount-manager.js';
import type { MountStorage } from '../mounts/mount-storage.js';
import { mountInfoOf, routePath, type MountEntry, type Router } from '../mounts/mount-table.js';
import { createNamespaceStore } from '../namespace/namespace-store.js';
import { isDescendantNamespace, ROOT_NAMESPACE, type Namespace, type NamespaceRegistry } from '../namespace/namespaces.js';
import { builtinPlugins } from '../catalog/builtins.js';
import { createPluginCatalog, type PluginCatalog } from '../catalog/catalog.js';
import { createPluginSupervisor, type PluginSupervisor } from '../supervisor/supervisor.js';
import { createPasswordPolicyStore, type PasswordPolicyStore } from '../password-policy/store.js';
import type { AclCache } from '../policy/acl-cache.js';
import { createPolicyStore, type PolicyStore } from '../policy/policy-store.js';
import { createTokenAccess } from '../request/access.js';
import { createPipeline, type Pipeline } from '../request/pipeline.js';
import { createQuotaManager, type QuotaManager } from '../quotas/quota-manager.js';
import { createTokenPort } from '../request/token-port.js';
import { createGenerateRoot, createRekey } from '../seal/root-recovery.js';
import { parseSealConfig, type SealManager } from '../seal/seal-manager.js';
import { createSystemBackend } from '../sys/backend.js';
import { corsPaths, createCorsStore } from '../sys/cors.js';
import { leasePaths } from '../sys/leases.js';
import { createNamespaceAdmin, type NamespaceAdmin } from '../sys/namespace-admin.js';
import { rootRecoveryPaths } from '../sys/root-recovery.js';
import { counterPaths } from '../sys/counters.js';
import { quotaPaths } from '../sys/quotas.js';
import { snapshotPaths } from '../sys/snapshot.js';
import type { Snapshots } from '../snapshot/snapshots.js';
import { eventPaths } from '../sys/events.js';
import { wrappingPaths } from '../sys/wrapping.js';
import { scoped, type SysPathDef } from '../sys/sys-path.js';
import { createTokenAuthBackend } from '../token-auth/backend.js';
import { createTokenStore, type TokenStore } from '../token/index.js';
import { tokenKeys } from '../token/keys.js';
import { createResponseWrapping, type ResponseWrapping } from '../wrapping/response-wrapping.js';
import type { MountTtls, SystemView } from '@strongroom/sdk-plugin/host';
import type { ServerConfig } from './server-config.js';

const PERIODIC_MS = 60_000;

export interface Unsealed {
  passwordPolicies: PasswordPolicyStore;
  policies: PolicyStore;
  tokens: TokenStore;
  expiration: ExpirationManager;
  audit: AuditBroker;
  supervisor: PluginSupervisor;
  mounts: MountManager;
  pipeline: Pipeline;
  quotas: QuotaManager;
  namespaceAdmin: NamespaceAdmin;
  /** The engines' periodic work: on the active node only. */
  periodic: NodeJS.Timeout | null;
  /**
   * What only the active node does, started once it is (a standby's state is
   * built without it): revocations a crash cut short, lease and token expiry
   * (the lease restore, awaited or in the background), the engines' periodic work.
   */
  activate(opts: { restoreLeasesInBackground: boolean }): Promise<void>;
  /** Signs (standby) and checks (active) the client address of forwarded requests. */
  forwardKey: Buffer;
}

/** The parts that outlive an unseal. */
export interface UnsealContext {
  config: ServerConfig;
  logger: CoreLogger;
  metrics: Metrics;
  barrier: Barrier;
  seal: SealManager;
  ha: HaManager | null;
  namespaces: NamespaceRegistry;
  router: Router<MountBinding>;
  aclCache: AclCache;
  cors: Cors;
  mountStorage: MountStorage;
  systemViewFor(uuid: string): SystemView;
  engineCalls: EngineCalls;
  system: { defaultTtl: number; maxTtl: number };
  ttlsOf(entry: MountEntry | undefined): MountTtls;
  namespaceLabel(id: string): string;
  /** The requests this node is serving (sys/in-flight-req). */
  inFlight: InFlight;
  /** Change events: published here, streamed by sys/events/subscribe. */
  events: EventHub;
  /** The node-local sys/ paths (sys/seal-paths.ts), listed by the root namespace's sys/ too. */
  nodeLocalPaths: SysPathDef[];
  defaultMounts: DefaultMounts;
  runDir: string;
  /** Snapshots of the store and their restore (sys/storage/snapshot*). */
  snapshots: Snapshots;
  version: string;
  isStopping(): boolean;
  /** The catalog and supervisor as soon as they exist: plugins may call back before the unseal completes. */
  onPlugins(p: { catalog: PluginCatalog; supervisor: PluginSupervisor }): void;
}

/** `standby`: build the state to serve reads without writing; `activate` later if this node becomes active. */
export async function unseal(ctx: UnsealContext, opts: { restoreLeasesInBackground: boolean; standby?: boolean }): Promise<Unsealed> {
  const { config, logger, metrics, barrier, seal, ha, namespaces, router, aclCache, cors, mountStorage, systemViewFor, engineCalls, system, ttlsOf, namespaceLabel, isStopping, onPlugins, version, defaultMounts, runDir, events } = ctx;
  const emit = coreEvents(events, namespaces);
  const started = Date.now();
  const { hmacKey, batchKey } = await tokenKeys(barrier);
  const policies = createPolicyStore({ store: barrier, namespaces, onChange: (ns, name, change) => emit.policy(change, ns, name) });
  if (!opts.standby) await policies.ensureDefault(namespaces.byId('root')!);
  const namespaceStore = createNamespaceStore({ store: barrier, registry: namespaces });
  await namespaceStore.load();
  const passwordPolicies = createPasswordPolicyStore({ store: barrier, namespaces });
  const corsStore = createCorsStore(barrier, cors);
  await corsStore.load();
  const audit = createAuditBroker({
    store: barrier,
    logger: logger.named('audit'),
    onDeviceFailure: (path, kind) => {
      metrics.auditFailures.inc({ device: path });
      (kind === 'request' ? metrics.vault.auditRequestFailure : metrics.vault.auditResponseFailure).inc();
    },
  });
  await audit.load();
  const catalog = createPluginCatalog({ store: barrier, pluginDirectory: config.pluginDirectory, builtins: builtinPlugins() });
  // A mount's lease TTLs now: the lease manager caps leases with them; each request to a plugin carries them.
  const mountTtlsOf = (uuid: string): MountTtls => ttlsOf(router.byUuid(uuid)?.entry);
  const supervisor = createPluginSupervisor({
    catalog,
    logger: logger.named('plugins'),
    callbacks: {
      storageFor: mountStorage.storageFor,
      systemViewFor,
      mountTtls: mountTtlsOf,
    },
    runDir,
    isStopping,
    onRestart: (plugin, version) => metrics.pluginRestarts.inc({ plugin, version }),
    ...(config.pluginCpuProfileDir ? { cpuProfileDir: config.pluginCpuProfileDir } : {}),
  });
  if (config.pluginCpuProfileDir) logger.warn('dev: plugin processes run WITHOUT the sandbox and write CPU profiles', { dir: config.pluginCpuProfileDir });
  onPlugins({ catalog, supervisor });
  const quotas: QuotaManager = createQuotaManager({
    store: barrier,
    namespaces,
    router,
    metrics,
    namespaceLabel,
    eachLease: (fn) => expiration.eachLease(fn),
    leasesRestored: () => expiration.restored(),
  });
  const expiration: ExpirationManager = createExpirationManager({
    store: barrier,
    logger: logger.named('expiration'),
    events: {
      issued: (leaseId, mount, ns, ttl) => emit.lease('issue', leaseId, mount, ns, { ttl }),
      revoked: (mount, expired, ns, lease) => {
        metrics.leaseRevocations.inc({ mount, namespace: namespaceLabel(ns) });
        if (expired) metrics.leaseExpirations.inc({ mount, namespace: namespaceLabel(ns) });
        if (!lease.token) emit.lease(expired ? 'expire' : 'revoke', lease.leaseId, mount, ns);
      },
      irrevocable: (mount, ns) => metrics.leaseIrrevocable.inc({ mount, namespace: namespaceLabel(ns) }),
      held: quotas.leaseHeld,
      dropped: quotas.leaseDropped,
    },
    quotaRole: (leaseId) => quotas.leaseRole(leaseId),
    mountTtls: mountTtlsOf,
    tokenExists: (key) => tokens.isLiveKey(key),
    revokeToken: (key) => tokens.revokeLeased(key),
    isDescendantNamespace: (ancestorId, candidateId) => isDescendantNamespace(namespaces, ancestorId, candidateId),
    options: {
      ...(config.leaseRevocation.retryBaseMs !== undefined ? { retryBaseMs: config.leaseRevocation.retryBaseMs } : {}),
      ...(config.leaseRevocation.maxAttempts !== undefined ? { maxRevokeAttempts: config.leaseRevocation.maxAttempts } : {}),
    },
    revoker: engineCalls.revoker,
  });
  // Rules before any lease: the restore that follows counts each lease under its rule.
  await quotas.load();
  const tokens: TokenStore = createTokenStore({
    store: barrier,
    hmacKey,
    batchKey,
    systemDefaultTtl: system.defaultTtl,
    systemMaxTtl: system.maxTtl,
    leases: expiration,
    mountOf: (path, ns) => {
      const m = router.match(ns, path);
      return m ? { path: m.mountPath, uuid: m.entry.uuid } : undefined;
    },
    onDestroy: async (e) => {
      // A revoked or expired token's event streams end now, not at their next event.
      events.endToken(e.key);
      await cubbyholes.destroy(e);
      if (wrapping.isWrappingToken(e)) await wrapping.forgetLegacy(e.key);
    },
    renewLogin: engineCalls.renewLogin,
    logger,
  });
  const cubbyholes = createCubbyholes({ store: barrier, router, namespaces });
  const wrapping: ResponseWrapping = createResponseWrapping({ cubbyholes, legacy: barrier, tokens, maxTtl: system.maxTtl });
  const access = createTokenAccess({ policies, namespaces, aclCache, tokens });

  const mounts: MountManager = createMountManager({
    store: barrier,
    router,
    namespaces,
    logger,
    revokeLeases: async (entry, ns) => void (await expiration.revokePrefix(ns.id, routePath(entry), { sync: true })),
    onEnable: (entry, ns) => emit.mount('enable', routePath(entry), entry, ns),
    onDisable: async (entry, ns) => {
      emit.mount('disable', routePath(entry), entry, ns);
      await quotas.mountGone(ns.id, routePath(entry));
      await supervisor.unmount(entry.uuid).catch(() => undefined);
      await mountStorage.wipe(entry, ns);
    },
    resolve: async (entry, ns) => {
      const env: MountEnv = { mount: mountInfoOf(entry, ns.path), storage: mountStorage.storageFor(entry.uuid), system: systemViewFor(entry.uuid), logger: logger.child({ mount: routePath(entry) }) };
      const builtin = `v${version}+builtin`;
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
            inFlight: ctx.inFlight.snapshot,
            hostPaths: config.storage.type === 'level' ? [config.storage.config.path] : [],
            ttlsOf,
            capabilities: access.capabilities,
            catalog: {
              list: (type) => catalog.list(type),
              get: (type, name, version) => catalog.get(type, name, version),
              register: (e) => catalog.register(e),
              remove: (type, name, version) => catalog.remove(type, name, version),
              reload: async (name, version) => {
                const types = new Set(router.entries().filter((e) => e.type === name).map((e) => (e.table === 'auth' ? ('auth' as const) : ('secret' as const))));
                for (const t of types.size ? types : new Set(['secret' as const])) await supervisor.reload(t, name, version);
                await mounts.rebind((e) => e.type === name && (version === undefined || mounts.runningVersion(e.uuid) === version));
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
                { title: 'Strongroom API', version: version },
              ),
            node: { clusterName: config.clusterName, clusterId: () => '', apiAddr: config.apiAddr, version: version },
            // Answered first, then done: stepping down tears down the pipeline serving this very request.
            stepDown: async () => void (ha ? setImmediate(() => void ha.stepDown().catch((err: unknown) => logger.error('step-down failed', { error: String(err) }))) : undefined),
            mounts,
            namespaceAdmin,
            extraPaths: [
              ...ctx.nodeLocalPaths,
              // Every namespace has its own leases.
              ...scoped(false, leasePaths({ expiration, namespaces, logger })),
              ...wrappingPaths({ wrapping }),
              ...counterPaths({ tokens }),
              ...quotaPaths({ quotas, namespaces }),
              ...eventPaths({ hub: events, namespaces, lookupToken: (id) => tokens.lookup(id), capabilities: (e, n, path) => access.capabilities.forEntry(e, n, path) }),
              ...corsPaths({ cors, store: corsStore }),
              ...snapshotPaths({ snapshots: ctx.snapshots }),
              // Attempts live as long as this unsealed state: sealing ends them.
              ...rootRecoveryPaths({
                generateRoot: createGenerateRoot({ seal: seal.rootKeys, createRootToken: async () => (await tokens.createRoot()).id }),
                rekey: createRekey({ seal, parseConfig: parseSealConfig, unavailable: 'this server has a static seal: its unseal key is wrapped by the seal key, not split into shares; rekey the recovery keys at sys/rekey-recovery-key' }),
                rekeyRecovery: createRekey({ seal: seal.recoveryKeys, parseConfig: parseSealConfig, unavailable: 'recovery keys exist only with an auto seal (seal "static" in the configuration)' }),
              }),
            ],
          },
          { rootNamespace: ns.id === ROOT_NAMESPACE.id },
        ).create(env);
        return { backend, description: backend.describe(), runningVersion: builtin };
      }
      if (entry.type === CUBBYHOLE_TYPE) {
        const backend = await createCubbyholeBackend({ cubbyholes }).create(env);
        return { backend, description: backend.describe(), runningVersion: builtin };
      }
      if (entry.type === 'token') {
        const backend = await createTokenAuthBackend({ tokens, namespaces }).create(env);
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

  const pipeline = createPipeline({ namespaces, router, logger, metrics, audit, wrapping, tokens: createTokenPort(tokens, ttlsOf), acl: access.acl, leases: expiration, quotas });
  const namespaceAdmin = createNamespaceAdmin({ registry: namespaces, store: namespaceStore, storage: barrier, mounts, defaultMounts: defaultMounts, policies, leases: expiration, tokens, logger });
  await mounts.load(defaultMounts);

  const unsealed: Unsealed = {
    passwordPolicies,
    policies,
    tokens,
    expiration,
    audit,
    supervisor,
    mounts,
    pipeline,
    quotas,
    periodic: null,
    forwardKey: forwardingKey(hmacKey),
    namespaceAdmin,
    async activate(o) {
      quotas.activate();
      // Revocations a crash cut short finish once the mount tables are bound: a token's cubbyhole is found through them.
      await tokens.resumeRevocations();
      namespaceAdmin.resumeDeletions();
      // Lease restore runs in the background after an unseal: requests are served meanwhile. A node
      // taking over has leases due (or overdue) from the old active node: it loads them all before serving.
      if (o.restoreLeasesInBackground) void expiration.restore().catch((err: unknown) => logger.error('lease restore failed', { error: String(err) }));
      else {
        const restored = await expiration.restore();
        if (restored.failed) {
          logger.warn('lease restore stopped by a storage error during takeover; resuming in the background', { loaded: restored.loaded });
          void expiration.restore().catch((err: unknown) => logger.error('lease restore failed', { error: String(err) }));
        }
      }
      unsealed.periodic ??= setInterval(() => {
        for (const e of router.entries()) {
          const b = router.byUuid(e.uuid)?.handle.backend;
          if (b) b.periodic().catch((err: unknown) => logger.warn('periodic function failed', { mount: routePath(e), error: String(err) }));
        }
      }, PERIODIC_MS);
      unsealed.periodic.unref();
    },
  };
  if (!opts.standby) await unsealed.activate(opts);

  logger.info(opts.standby ? 'unsealed as a standby serving reads' : 'unsealed', { ms: Date.now() - started });
  return unsealed;
}

/** Stops everything an unseal started; every key it held leaves memory with it. */
export async function teardown(ctx: Pick<UnsealContext, 'aclCache' | 'namespaces' | 'events'>, s: Unsealed): Promise<void> {
  if (s.periodic) clearInterval(s.periodic);
  // Streams check tokens against this unsealed state: they end with it (clients resume with Last-Event-ID).
  ctx.events.endAll('the server sealed or stepped down');
  await s.namespaceAdmin.idle();
  s.expiration.stop();
  s.quotas.stop();
  await s.mounts.unloadAll();
  await s.supervisor.shutdown();
  await s.audit.close();
  ctx.aclCache.clear();
  // Namespaces are read again at the next unseal.
  for (const ns of ctx.namespaces.all()) ctx.namespaces.remove(ns.id);
}
