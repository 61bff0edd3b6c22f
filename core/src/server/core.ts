/**
 * The composition root: builds the kernel from its parts and runs the seal
 * lifecycle. While sealed, only the seal endpoints and health answer; on
 * unseal the policy store, token store, expiration manager, audit devices,
 * plugin catalog and supervisor are created and the mount tables are bound
 * (plugins start in the background, never blocking unseal); on seal all of
 * it is torn down and every key leaves memory.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StrongroomError, badRequest, helpFor, httpStatusFor, toOpenApi, type Backend, type LogicalRequest, type MountEnv, type PathDef, type Storage, type SystemView } from '@strongroom/sdk-plugin/host';
import { createAuditBroker, type AuditBroker } from '../audit/broker.js';
import { BarrierIntegrityError, createBarrier } from '../barrier/barrier.js';
import { FORWARDED_FOR_HEADER, createForwarder, forwardedClient, forwardingKey, redirectReply, wantsRedirect } from '../ha/forward.js';
import { DEFAULT_HA_TIMINGS, createHaManager, type HaManager, type HaTimings } from '../ha/ha-manager.js';
import { createPostgresLock } from '../ha/postgres-lock.js';
import { createExpirationManager, type ExpirationManager, type LeaseEntry } from '../expiration/index.js';
import { createListener, type Listener } from '../http/listener.js';
import type { ApiReply, ApiRequest } from '../http/types.js';
import type { CoreLogger } from '../log/logger.js';
import { createMetrics, timed, type Metrics } from '../metrics/metrics.js';
import { createMountManager, type MountBinding, type MountManager } from '../mounts/mount-manager.js';
import { createRouter, mountInfoOf, routePath, storagePrefixOf, type MountEntry } from '../mounts/mount-table.js';
import { createNamespaceAdmin } from '../sys/namespace-admin.js';
import { createNamespaceStore } from '../namespace/namespace-store.js';
import { createNamespaceRegistry, ROOT_NAMESPACE, tokenScope, type Namespace } from '../namespace/namespaces.js';
import { createPluginCatalog, isSemver, type PluginCatalog } from '../plugins/catalog.js';
import { createPluginSupervisor, type PluginSupervisor } from '../plugins/supervisor.js';
import { createAclCache } from '../policy/acl-cache.js';
import { createPasswordPolicyStore, type PasswordPolicyStore } from '../password-policy/store.js';
import { createPolicyStore, type PolicyStore } from '../policy/policy-store.js';
import { createPipeline } from '../request/pipeline.js';
import type { CallerToken } from '../request/ports.js';
import { createInmemPhysical } from '../storage/inmem.js';
import { createLevelPhysical } from '../storage/level.js';
import { createPostgresPhysical, type PostgresPhysical } from '../storage/postgresql.js';
import type { Physical } from '../storage/physical.js';
import { createClosableView, createView, type ClosableView } from '../storage/view.js';
import { createSystemBackend } from '../sys/backend.js';
import { leasePaths, revokeLeasePrefix } from '../sys/leases.js';
import { corsPaths, createCorsStore } from '../sys/cors.js';
import { createCors } from '../http/cors.js';
import { createTokenAuthBackend } from '../token-auth/backend.js';
import { createTokenStore, type LoginRenewal, type TokenEntry, type TokenStore } from '../token/index.js';
import { wrappingPaths } from '../sys/wrapping.js';
import { rootRecoveryPaths } from '../sys/root-recovery.js';
import { createGenerateRoot, createRekey } from '../seal/root-recovery.js';
import { createSealManager, parseSealConfig } from '../seal/seal-manager.js';
import { createResponseWrapping, type ResponseWrapping } from '../wrapping/response-wrapping.js';
import { builtinPlugins, pluginRuntimeDirs } from '../plugins/builtins.js';
import type { ServerConfig } from './server-config.js';

export const CORE_VERSION = '0.1.0';
const TOKEN_KEYS_PATH = 'core/token-keys';
const PERIODIC_MS = 60_000;

/** The mounts every namespace starts with: its sys/ and its token auth method. */
const DEFAULT_MOUNTS = () => [
  { table: 'mounts' as const, path: 'sys/', input: { type: 'system', description: 'system endpoints used for control, policy and debugging' }, system: true },
  { table: 'auth' as const, path: 'token/', input: { type: 'token', description: 'token based credentials' }, system: true },
];

/** Paths that answer while sealed (and before any token exists). */
const SEAL_PATHS = new Set(['sys/health', 'sys/seal-status', 'sys/init', 'sys/unseal']);
/** Answered by every node itself (a standby forwards everything but this and the seal paths). */
const LEADER_PATH = 'sys/leader';

interface Unsealed {
  policies: PolicyStore;
  passwordPolicies: PasswordPolicyStore;
  tokens: TokenStore;
  expiration: ExpirationManager;
  audit: AuditBroker;
  catalog: PluginCatalog;
  supervisor: PluginSupervisor;
  mounts: MountManager;
  pipeline: ReturnType<typeof createPipeline>;
  namespaceAdmin: ReturnType<typeof createNamespaceAdmin>;
  periodic: NodeJS.Timeout;
  wrapping: ResponseWrapping;
  /** Signs (standby) and checks (active) the client address of forwarded requests. */
  forwardKey: Buffer;
}

/** sys/leader's body, as Vault's. */
export interface LeaderStatus {
  ha_enabled: boolean;
  is_self: boolean;
  active_time: string;
  leader_address: string;
  leader_cluster_address: string;
  performance_standby: boolean;
  performance_standby_last_remote_wal: number;
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
        ? (pg = createPostgresPhysical({
            connectionUrl: storage.connectionUrl,
            ...(storage.table !== undefined ? { table: storage.table } : {}),
            ...(storage.haTable !== undefined ? { haTable: storage.haTable } : {}),
            ...(storage.maxParallel !== undefined ? { maxParallel: storage.maxParallel } : {}),
            logger,
          }))
        : await createLevelPhysical({ path: storage.path });
  const physical = timedPhysical(rawPhysical, metrics);
  const barrier = timedBarrier(createBarrier(physical), metrics);
  const seal = createSealManager({ physical, barrier, clusterName: config.clusterName, storageType: config.storage.type, version: CORE_VERSION, log: logger.named('seal') });
  const requestLog = logger.named('request');
  const requestLogLevel = config.logRequestsLevel ?? 'debug';
  let tokenCounts: { at: number; counts: Array<{ type: string; namespaceId: string; count: number }> } | null = null;
  metrics.onScrape(async () => {
    const s = state;
    metrics.leases.reset();
    metrics.pluginUp.reset();
    metrics.pluginDegraded.reset();
    if (!s) return;
    for (const m of s.expiration.countByMount()) metrics.leases.set({ mount: m.mountPath, namespace: namespaceLabel(m.namespaceId) }, m.count);
    metrics.irrevocableLeases.set(s.expiration.stats().irrevocable);
    for (const p of s.supervisor.stats()) {
      metrics.pluginUp.set({ plugin: p.plugin, version: p.version }, p.state === 'running' ? 1 : 0);
      metrics.pluginDegraded.set({ plugin: p.plugin, version: p.version }, p.state === 'degraded' ? 1 : 0);
    }
    // Counting tokens scans their entries: at most once a minute, as Vault's usage gauges are periodic too.
    if (!tokenCounts || Date.now() - tokenCounts.at > 60_000) tokenCounts = { at: Date.now(), counts: await s.tokens.countTokens() };
    metrics.tokens.reset();
    for (const c of tokenCounts.counts) metrics.tokens.set({ type: c.type, namespace: namespaceLabel(c.namespaceId) }, c.count);
  });
  /** A namespace as a metric label: its path, "root", or its id once it is gone. */
  const namespaceLabel = (id: string) => namespaces.byId(id || ROOT_NAMESPACE.id)?.path || (id === 'root' || id === '' ? 'root' : id);
  const namespaces = createNamespaceRegistry();
  const router = createRouter<MountBinding>();
  const aclCache = createAclCache();
  // Lives as long as the process: the listener applies it, sealed or not (Vault's behaviour).
  const cors = createCors();
  const runDir = mkdtempSync(join(tmpdir(), 'strongroom-run-'));
  const systemDefaultTtl = config.defaultLeaseTtl || 32 * 24 * 3600;
  const systemMaxTtl = config.maxLeaseTtl || 32 * 24 * 3600;
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
          lock: createPostgresLock({ physical: pg, identity: haIdentity, value: config.apiAddr, ttlMs: (opts.haTimings?.ttlMs ?? DEFAULT_HA_TIMINGS.ttlMs) }),
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
  const forwarder = ha ? createForwarder() : null;
  metrics.onScrape(() => {
    metrics.unsealed.set(barrier.sealed ? 0 : 1);
    metrics.active.set(barrier.sealed || (ha !== null && ha.state !== 'active') ? 0 : 1);
    metrics.haEnabled.set(ha ? 1 : 0);
  });
  /** A standby's copy of the forwarding key (read from storage once); dropped on seal. */
  let standbyForwardKey: Buffer | null = null;

  async function tokenKeys(): Promise<{ hmacKey: Buffer; batchKey: Buffer }> {
    const raw = await barrier.get(TOKEN_KEYS_PATH);
    if (raw) {
      const b = Buffer.from(raw);
      return { hmacKey: b.subarray(0, 32), batchKey: b.subarray(32, 64) };
    }
    const fresh = randomBytes(64);
    await barrier.put(TOKEN_KEYS_PATH, fresh);
    return { hmacKey: fresh.subarray(0, 32), batchKey: fresh.subarray(32, 64) };
  }

  function mountTtls(entry: MountEntry | undefined) {
    const maxTtl = Math.min(entry?.config.max_lease_ttl || systemMaxTtl, systemMaxTtl);
    const defaultTtl = Math.min(entry?.config.default_lease_ttl || systemDefaultTtl, maxTtl);
    return { defaultTtl, maxTtl };
  }

  /** Each mount's one storage view, closed by its disable (finding 8 of issue 11). */
  const mountStorage = new Map<string, ClosableView>();
  const mountGone = () => new StrongroomError('unsupported_path', 'the mount has been disabled');

  function storageFor(uuid: string): Storage {
    const open = mountStorage.get(uuid);
    if (open) return open;
    const found = router.byUuid(uuid);
    if (!found) throw new StrongroomError('unsupported_path', 'unknown mount');
    const ns = namespaces.byId(found.entry.namespace_id);
    const view = createClosableView(barrier, storagePrefixOf(found.entry, ns ? namespaces.storagePrefix(ns) : ''), mountGone);
    mountStorage.set(uuid, view);
    return view;
  }

  function systemViewFor(uuid: string): SystemView {
    return {
      defaultLeaseTtl: async () => mountTtls(router.byUuid(uuid)?.entry).defaultTtl,
      maxLeaseTtl: async () => mountTtls(router.byUuid(uuid)?.entry).maxTtl,
      generatePasswordFromPolicy: async (name) => {
        const s = state;
        if (!s) throw new StrongroomError('unavailable', 'Vault is sealed');
        const found = router.byUuid(uuid);
        const ns = found ? namespaces.byId(found.entry.namespace_id) : undefined;
        if (!ns) throw new StrongroomError('unavailable', 'the mount is gone');
        const password = await s.passwordPolicies.generate(ns, name);
        if (password === null) throw badRequest(`password_policy: password policy "${name}" does not exist`);
        return password;
      },
      coreVersion: async () => CORE_VERSION,
      openDatabasePlugin: async (name, version) => {
        if (router.byUuid(uuid)?.entry.type !== 'database') throw new StrongroomError('permission_denied', 'only the database engine may open database plugins');
        if (!plugins) throw new StrongroomError('unavailable', 'Vault is sealed');
        return plugins.supervisor.openDatabase(await resolveDatabasePlugin(plugins.catalog, name, version));
      },
    };
  }

  /** A connection's plugin_name and plugin_version -> the catalog entry; 400s name the field. */
  async function resolveDatabasePlugin(catalog: PluginCatalog, name: string, version: string) {
    if (version !== '' && !isSemver(version)) throw badRequest(`plugin_version: "${version}" is not a semantic version`);
    if (version !== '') {
      const entry = await catalog.get('database', name, version);
      if (!entry) throw badRequest(`plugin_version: version ${version} of database plugin "${name}" is not registered`);
      return entry;
    }
    const all = (await catalog.list('database')).filter((e) => e.name === name);
    const entry = all.find((e) => e.builtin) ?? (all.length === 1 ? all[0] : undefined);
    if (entry) return entry;
    if (all.length === 0) throw badRequest(`plugin_name: no database plugin named "${name}" is registered`);
    throw badRequest(`plugin_version: several versions of "${name}" are registered and none is built in; pin one`);
  }

  function backendOf(mountUuid: string): Backend {
    const b = router.byUuid(mountUuid)?.handle.backend;
    if (!b) throw new StrongroomError('unavailable', 'the mount that issued this lease is not available');
    return b;
  }

  function leaseRequest(lease: LeaseEntry, operation: 'renew' | 'revoke', increment: number): LogicalRequest {
    const found = router.byUuid(lease.mountUuid);
    const ns = found ? namespaces.byId(found.entry.namespace_id) : undefined;
    if (!found || !ns) throw new StrongroomError('unavailable', 'the mount that issued this lease is gone');
    return {
      id: randomBytes(8).toString('hex'),
      operation,
      path: lease.requestPath,
      mount: mountInfoOf(found.entry, ns.path),
      data: {},
      client: { remoteAddress: '', displayName: 'expiration', tokenAccessor: '', entityId: '', policies: [], metadata: {} },
      secret: {
        leaseId: lease.leaseId,
        secretType: lease.secretType,
        internalData: lease.internalData,
        ttl: lease.ttl,
        increment,
        issueTime: lease.issueTime,
        lastRenewalTime: lease.lastRenewalTime ?? null,
      },
    };
  }

  /** Vault's auth renew: the auth mount that issued a login token re-checks it (role still there, ...) or refuses. */
  async function renewLogin(entry: TokenEntry, increment: number): Promise<LoginRenewal> {
    const found = entry.login ? router.byUuid(entry.login.mountUuid) : undefined;
    const ns = found ? namespaces.byId(found.entry.namespace_id) : undefined;
    if (!entry.login || !found || !ns) throw badRequest('the auth mount that issued this token is gone; it cannot be renewed');
    const mountPath = routePath(found.entry);
    const backend = found.handle.backend;
    if (!backend) throw new StrongroomError('unavailable', `the auth method at ${mountPath} is not available; try the renewal again`);
    const resp = await backend.handleRequest({
      id: randomBytes(8).toString('hex'),
      operation: 'renew',
      path: entry.path.startsWith(mountPath) ? entry.path.slice(mountPath.length) : entry.path,
      mount: mountInfoOf(found.entry, ns.path),
      data: { increment },
      client: { remoteAddress: '', displayName: entry.displayName, tokenAccessor: entry.accessor, entityId: entry.entityId, policies: [...entry.policies], metadata: { ...entry.meta } },
      auth: { internalData: { ...entry.login.internalData }, metadata: { ...entry.meta }, policies: [...entry.policies] },
    });
    if (!resp?.auth) throw badRequest(`the auth method at ${mountPath} did not renew the token`);
    return { ttl: resp.auth.ttl, maxTtl: resp.auth.maxTtl, period: resp.auth.period, policies: resp.auth.policies };
  }

  async function postUnseal(opts: { restoreLeasesInBackground: boolean } = { restoreLeasesInBackground: true }): Promise<void> {
    const started = Date.now();
    const { hmacKey, batchKey } = await tokenKeys();
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
    const supervisor = createPluginSupervisor({ catalog, logger: logger.named('plugins'), callbacks: { storageFor, systemViewFor }, runDir, runtimeDirs: pluginRuntimeDirs(), isStopping: () => stopping, onRestart: (plugin, version) => metrics.pluginRestarts.inc({ plugin, version }) });
    plugins = { catalog, supervisor };
    let tokens!: TokenStore;
    const expiration = createExpirationManager({
      store: barrier,
      logger: logger.named('expiration'),
      events: {
        revoked: (mount, expired, ns) => {
          metrics.leaseRevocations.inc({ mount, namespace: namespaceLabel(ns) });
          if (expired) metrics.leaseExpirations.inc({ mount, namespace: namespaceLabel(ns) });
        },
        irrevocable: (mount, ns) => metrics.leaseIrrevocable.inc({ mount, namespace: namespaceLabel(ns) }),
      },
      mountTtls: (uuid) => mountTtls(router.byUuid(uuid)?.entry),
      tokenExists: (key) => tokens.isLiveKey(key),
      isDescendantNamespace: (ancestorId, candidateId) => {
        const a = namespaces.byId(ancestorId || ROOT_NAMESPACE.id);
        const c = namespaces.byId(candidateId || ROOT_NAMESPACE.id);
        return a !== undefined && c !== undefined && c.id !== a.id && c.path.startsWith(a.path);
      },
      options: {
        ...(config.leaseRevocation.retryBaseMs !== undefined ? { retryBaseMs: config.leaseRevocation.retryBaseMs } : {}),
        ...(config.leaseRevocation.maxAttempts !== undefined ? { maxRevokeAttempts: config.leaseRevocation.maxAttempts } : {}),
      },
      revoker: {
        revokeSecret: async (lease) => {
          await backendOf(lease.mountUuid).handleRequest(leaseRequest(lease, 'revoke', 0));
        },
        renewSecret: async (lease, increment) => {
          const resp = await backendOf(lease.mountUuid).handleRequest(leaseRequest(lease, 'renew', increment));
          return { ttl: resp?.secret?.ttl ?? increment, renewable: resp?.secret?.renewable ?? true, ...(resp?.data ? { data: resp.data } : {}), ...(resp?.warnings ? { warnings: resp.warnings } : {}) };
        },
      },
    });
    let wrapping!: ResponseWrapping;
    tokens = createTokenStore({
      store: barrier,
      hmacKey,
      batchKey,
      systemDefaultTtl,
      systemMaxTtl,
      leases: { revokeByToken: async (k) => void (await expiration.revokeByToken(k)) },
      onDestroy: async (e) => {
        if (wrapping.isWrappingToken(e)) await wrapping.forget(e.key);
      },
      renewLogin,
      logger,
    });
    wrapping = createResponseWrapping({ store: barrier, tokens, maxTtl: systemMaxTtl });
    await tokens.startExpiry();

    const sysDeps = {
      namespaces,
      policies,
      passwordPolicies,
      audit,
      metrics,
      prometheusRetentionTime: config.telemetry.prometheusRetentionTime,
      logger,
      capabilities: {
        forEntry: async (entry: unknown, ns: Namespace, path: string) => capabilitiesOf(entry as TokenEntry | null, ns, path),
        forAccessor: async (accessor: string, ns: Namespace, path: string) => capabilitiesOf(await tokens.lookupByAccessor(accessor), ns, path),
        forToken: async (token: string, ns: Namespace, path: string) => capabilitiesOf(await tokens.lookup(token), ns, path),
        seesMount: async (entry: unknown, ns: Namespace, mountPath: string) => {
          const scoped = await scopedAcl(entry as TokenEntry | null, ns, mountPath);
          return scoped !== null && scoped.acl.anyAccessUnder(scoped.path);
        },
      },
      catalog: {
        list: (type?: string) => catalog.list(type as never),
        get: (type: string, name: string, version?: string) => catalog.get(type as never, name, version),
        register: async (e: Parameters<PluginCatalog['register']>[0]) => void (await catalog.register(e)),
        remove: (type: string, name: string, version: string) => catalog.remove(type as never, name, version),
        reload: async (name: string) => {
          const types = new Set(router.entries().filter((e) => e.type === name).map((e) => (e.table === 'auth' ? 'auth' : 'secret') as 'auth' | 'secret'));
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
      openapi: async (ns: Namespace) =>
        toOpenApi(
          router
            .entries(ns.id)
            .map((e) => ({ prefix: routePath(e), description: router.byUuid(e.uuid)?.handle.description }))
            .filter((x): x is { prefix: string; description: NonNullable<typeof x.description> } => x.description !== undefined),
          { title: 'Strongroom API', version: CORE_VERSION },
        ),
      node: { clusterName: config.clusterName, clusterId: () => '', apiAddr: config.apiAddr, version: CORE_VERSION },
      // Answered first, then done: stepping down tears down the pipeline serving this very request.
      stepDown: async () => void (ha ? setImmediate(() => void ha.stepDown().catch((err: unknown) => logger.error('step-down failed', { error: String(err) }))) : undefined),
      extraPaths: [
        ...leasePaths({ expiration, namespaces, logger, tokens }),
        ...wrappingPaths({ wrapping }),
        ...corsPaths({ cors, store: corsStore }),
        // Attempts live as long as this unsealed state: sealing ends them.
        ...rootRecoveryPaths({
          generateRoot: createGenerateRoot({ seal, createRootToken: async () => (await tokens.createRoot()).id }),
          rekey: createRekey({ seal, parseConfig: parseSealConfig }),
        }),
      ] as PathDef[],
    } as const;

    const mounts: MountManager = createMountManager({
      store: barrier,
      router,
      namespaces,
      logger,
      revokeLeases: async (entry, ns) => {
        await revokeLeasePrefix({ expiration, tokens }, ns.id, routePath(entry), { sync: true });
      },
      onDisable: async (entry, ns) => {
        await supervisor.unmount(entry.uuid).catch(() => undefined);
        // No write through the mount's view lands after this (a plugin's background task, a straggler):
        // what the scan below deletes stays deleted.
        const open = mountStorage.get(entry.uuid);
        mountStorage.delete(entry.uuid);
        await open?.close();
        const view = createView(barrier, storagePrefixOf(entry, namespaces.storagePrefix(ns)));
        for await (const e of view.scan('')) await view.delete(e.key);
      },
      resolve: async (entry, ns) => {
        const env: MountEnv = {
          mount: mountInfoOf(entry, ns.path),
          storage: storageFor(entry.uuid),
          system: systemViewFor(entry.uuid),
          logger: logger.child({ mount: routePath(entry) }),
        };
        if (entry.type === 'system') {
          const backend = await createSystemBackend({ ...sysDeps, mounts, namespaceAdmin }, { rootNamespace: ns.id === ROOT_NAMESPACE.id }).create(env);
          return { backend, description: backend.describe(), runningVersion: `v${CORE_VERSION}+builtin` };
        }
        if (entry.type === 'token') {
          const backend = await createTokenAuthBackend({ tokens, namespaceIdOf: (p) => namespaces.byPath(p)?.id ?? 'root' }).create(env);
          return { backend, description: backend.describe(), runningVersion: `v${CORE_VERSION}+builtin` };
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

    const aclFor = async (names: readonly string[], ns: Namespace) => aclCache.get(await policies.resolve(ns, names));
    /** A token's ACL and the path as its own namespace sees it (the pipeline's rule), or null outside its reach. */
    const scopedAcl = async (e: TokenEntry | null, ns: Namespace, path: string) => {
      const scope = e ? tokenScope(namespaces, e.namespaceId, ns, path) : null;
      return e && scope ? { acl: await aclFor(e.policies, scope.namespace), path: scope.path } : null;
    };
    const capabilitiesOf = async (e: TokenEntry | null, ns: Namespace, path: string) => {
      const scoped = await scopedAcl(e, ns, path);
      return scoped ? scoped.acl.capabilities(scoped.path) : ['deny'];
    };

    const pipeline = createPipeline({
      namespaces,
      router,
      logger,
      metrics,
      audit,
      wrapping,
      tokens: {
        lookup: async (id) => {
          const e = await tokens.lookup(id);
          return e ? toCaller(id, e) : null;
        },
        use: async (t) => {
          // The entry looked up at the start of this request: no second lookup.
          const r = await tokens.useToken(t.entry as TokenEntry);
          if (!r) throw new StrongroomError('permission_denied', 'permission denied');
          return { exhausted: r.lastUse, entry: r.entry };
        },
        // revoke(id) would miss it: after its last use the token no longer looks up by id.
        revokeExhausted: (t) => tokens.revokeEntry(t.entry as TokenEntry),
        cidrAllowed: (t, addr) => tokens.checkCidr({ boundCidrs: t.boundCidrs } as unknown as TokenEntry, addr),
        createFromAuth: async (auth, ctx) => {
          const ttls = mountTtls(ctx.mount);
          const created = await tokens.createFromLogin(auth, {
            mountUuid: ctx.mount.uuid,
            path: ctx.path,
            mountPath: routePath(ctx.mount),
            namespaceId: ctx.namespace.id,
            mountDefaultTtl: ttls.defaultTtl,
            mountMaxTtl: ttls.maxTtl,
          });
          return tokens.authBlock(created.entry, created.id);
        },
      },
      acl: {
        check: async (t, ns, op, path, data) => {
          const r = (await aclFor(t.policies, ns)).check(op, path, data);
          return { allowed: r.allowed, sudo: r.sudo };
        },
      },
      leases: {
        register: async ({ mount, namespace, requestPath, secret, token }) => {
          const rel = requestPath.startsWith(routePath(mount)) ? requestPath.slice(routePath(mount).length) : requestPath;
          const lease = await expiration.register({ mountPath: routePath(mount), mountUuid: mount.uuid, namespaceId: namespace.id, requestPath: rel, secret, tokenKey: token?.key ?? '' });
          return { leaseId: lease.leaseId, ttl: lease.ttl, renewable: lease.renewable };
        },
      },
      help: (binding, mountPath, rel) => (binding.description ? helpFor(binding.description, rel) : { help: '', openapi: {} }) as unknown as Record<string, unknown>,
    });

    const namespaceAdmin = createNamespaceAdmin({
      registry: namespaces,
      store: namespaceStore,
      storage: barrier,
      mounts,
      defaultMounts: DEFAULT_MOUNTS,
      policies,
      leases: {
        async revokeMountSync(ns, mountPath) {
          await expiration.revokePrefix(ns.id, mountPath, { sync: true });
        },
        // What revocation could not remove (an engine that refused) goes with the namespace.
        async removeNamespace(ns) {
          for (const prefix of await expiration.listPrefix(ns.id, '')) await expiration.revokePrefix(ns.id, prefix, { force: true });
        },
      },
      tokens,
      logger,
    });
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

    state = { policies, passwordPolicies, tokens, expiration, audit, catalog, supervisor, mounts, pipeline, periodic, wrapping, forwardKey: forwardingKey(hmacKey), namespaceAdmin };
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
    const { hmacKey, batchKey } = await tokenKeys();
    const tokens = createTokenStore({ store: barrier, hmacKey, batchKey, systemDefaultTtl, systemMaxTtl, leases: { revokeByToken: async () => undefined }, logger });
    const root = await tokens.createRoot(pendingRootToken ?? undefined);
    pendingRootToken = root.id;
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
      standbyForwardKey = null;
    });
  } else {
    seal.onUnseal(() => postUnseal());
    seal.onSeal(preSeal);
  }

  function leaderStatus(): LeaderStatus {
    const leader = ha?.leader() ?? null;
    return {
      ha_enabled: ha !== null,
      is_self: ha ? leader?.isSelf === true : true,
      active_time: (ha?.activeSince ?? new Date(0)).toISOString(),
      leader_address: ha ? (leader?.value ?? '') : config.apiAddr,
      leader_cluster_address: '',
      performance_standby: false,
      performance_standby_last_remote_wal: 0,
    };
  }

  /** A standby's reply to anything but health, seal status and leader: the active node's answer, or a 307 to it. */
  async function fromActive(req: ApiRequest): Promise<ApiReply> {
    const leader = ha ? (ha.leader() ?? (await ha.refreshLeader())) : null;
    if (ha?.state === 'activating' || leader?.isSelf) throw new StrongroomError('unavailable', 'this node is becoming the active node; retry shortly');
    if (!leader || leader.value === '') throw new StrongroomError('unavailable', 'local node not active but active cluster node not found');
    if (wantsRedirect(req.headers)) return redirectReply(req, leader.value);
    if (req.headers[FORWARDED_FOR_HEADER] !== undefined) throw new StrongroomError('unavailable', 'the active node changed while forwarding; retry');
    if (!standbyForwardKey) {
      // Written under a term this standby may not know yet (the active node rotated): re-read the keyring once.
      const raw = await barrier.get(TOKEN_KEYS_PATH).catch(async (err: unknown) => {
        if (!(err instanceof BarrierIntegrityError)) throw err;
        await barrier.refresh();
        return barrier.get(TOKEN_KEYS_PATH);
      });
      if (!raw) throw new StrongroomError('unavailable', 'the cluster is not set up yet: no active node has served');
      standbyForwardKey = forwardingKey(Buffer.from(raw).subarray(0, 32));
    }
    return forwarder!.forward(req, leader.value, standbyForwardKey);
  }

  async function handleSealPath(req: ApiRequest): Promise<ApiReply> {
    switch (req.path) {
      // Read-only endpoints answer reads only (a DELETE of sys/seal-status answered 200).
      case 'sys/health':
        if (req.operation !== 'read') throw new StrongroomError('unsupported_operation', 'unsupported operation');
        return health(req);
      case 'sys/seal-status':
        if (req.operation !== 'read') throw new StrongroomError('unsupported_operation', 'unsupported operation');
        return { status: 200, body: await seal.status() };
      case 'sys/init': {
        if (req.operation === 'read') return { status: 200, body: { initialized: await seal.initialized() } };
        if (req.operation !== 'write') throw new StrongroomError('unsupported_operation', 'unsupported operation');
        pendingRootToken = null;
        const result = await seal.init(req.data);
        const rootToken = pendingRootToken;
        pendingRootToken = null;
        return { status: 200, body: { ...result, root_token: rootToken } };
      }
      case 'sys/unseal': {
        if (req.operation !== 'write') throw new StrongroomError('unsupported_operation', 'unsupported operation');
        const d = req.data as { key?: unknown; reset?: unknown; migrate?: unknown };
        const reset = d.reset === true || d.reset === 'true';
        if (!reset && (typeof d.key !== 'string' || d.key === '')) throw badRequest("key: missing required parameter 'key'");
        return { status: 200, body: await seal.submitUnsealKey(typeof d.key === 'string' ? d.key : undefined, { reset, migrate: d.migrate === true }) };
      }
    }
    throw new StrongroomError('unsupported_path', 'unsupported path');
  }

  async function health(req: ApiRequest): Promise<ApiReply> {
    const q = req.query as Record<string, string | undefined>;
    const code = (name: string, dflt: number) => {
      const v = q[name];
      if (v === undefined || v === '') return dflt;
      const n = Number(v);
      if (!Number.isInteger(n) || n < 100 || n > 599) throw badRequest(`${name}: must be an HTTP status code`);
      return n;
    };
    const initialized = await seal.initialized();
    const sealed = barrier.sealed;
    const standby = !sealed && ha !== null && ha.state !== 'active';
    const standbyOk = q.standbyok !== undefined && q.standbyok !== 'false' && q.standbyok !== '0';
    const status = !initialized
      ? code('uninitcode', 501)
      : sealed
        ? code('sealedcode', 503)
        : standby && !standbyOk
          ? code('standbycode', 429)
          : code('activecode', 200);
    const body = {
      initialized,
      sealed,
      standby,
      performance_standby: false,
      replication_performance_mode: 'disabled',
      replication_dr_mode: 'disabled',
      server_time_utc: Math.floor(Date.now() / 1000),
      version: CORE_VERSION,
      cluster_name: config.clusterName,
      cluster_id: '',
    };
    return { status, body };
  }

  /** The mount a request is for (with its namespace path), for metrics; '' when none. */
  function mountLabel(path: string): { mount: string; namespace: string } {
    try {
      const r = namespaces.resolve(path);
      const m = router.match(r.namespace.id, r.path);
      return { mount: m ? `${r.namespace.path}${m.mountPath}` : '', namespace: r.namespace.path || 'root' };
    } catch {
      return { mount: '', namespace: '' };
    }
  }

  async function handle(req: ApiRequest): Promise<ApiReply> {
    const started = process.hrtime.bigint();
    let status = 500;
    try {
      const reply = await dispatch(req);
      status = reply.status;
      return reply;
    } catch (err) {
      status = httpStatusFor(err);
      throw err;
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const bare = req.path.replace(/\/+$/, '');
      const { mount, namespace } = SEAL_PATHS.has(bare) ? { mount: 'sys/', namespace: 'root' } : mountLabel(req.path);
      metrics.requests.inc({ operation: req.operation, mount, status: String(status) });
      metrics.requestDuration.observe({ operation: req.operation, mount }, seconds);
      // Never the token, the body or the query: method, path (token-looking segments masked), status, time, namespace.
      if (requestLogLevel !== 'off') requestLog.log(requestLogLevel, 'request', { method: req.method, path: redactPath(req.urlPath), status, duration_ms: Math.round(seconds * 1e5) / 100, namespace });
    }
  }

  async function dispatch(req: ApiRequest): Promise<ApiReply> {
    {
      const bare = req.path.replace(/\/+$/, '');
      if (SEAL_PATHS.has(bare)) return await handleSealPath({ ...req, path: bare });
      if (bare === LEADER_PATH && req.operation === 'read') {
        // Node-local and unauthenticated, answered flat as Vault does (not in a response envelope).
        if (barrier.sealed) throw new StrongroomError('unavailable', 'Vault is sealed');
        if (ha && !ha.leader()) await ha.refreshLeader();
        return { status: 200, body: leaderStatus() };
      }
      if (ha && !barrier.sealed && ha.state !== 'active') return await fromActive(req);
      const s = state;
      if (!s) throw new StrongroomError('unavailable', 'Vault is sealed');
      const wrapTtl = s.wrapping.parseTtl(headerValue(req.headers['x-service-wrap-ttl']) ?? headerValue(req.headers['x-vault-wrap-ttl']));
      const reply = await s.pipeline.handle({
        id: req.id,
        operation: req.operation,
        path: req.path,
        token: req.token ?? null,
        data: req.data,
        // A request forwarded by a standby carries its client's address, signed by that node.
        remoteAddress: (ha && forwardedClient(req, s.forwardKey)) || req.remoteAddress,
        help: req.help,
        headers: {},
        clientToken: req.token,
        ...(wrapTtl !== null ? { wrapTtl } : {}),
      });
      return reply.raw ? { status: reply.status, body: { raw: reply.raw.body, contentType: reply.raw.contentType } } : { status: reply.status, body: reply.body, ...(reply.headers ? { headers: reply.headers } : {}) };
    }
  }

  return {
    handle,
    async listen() {
      listeners = config.listeners.map((l) =>
        createListener({ address: l.address, tls: l.tls, maxRequestSize: l.maxRequestSize, requireRequestHeader: l.requireRequestHeader }, handle, { logger, cors }),
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
    async shutdown() {
      stopping = true;
      await Promise.allSettled(listeners.map((l) => l.close()));
      // An HA node releases the lock on the way out, so a standby takes over at once instead of after its TTL.
      if (ha) await ha.stop();
      else if (state) await preSeal();
      forwarder?.close();
      await physical.close();
      rmSync(runDir, { recursive: true, force: true });
    },
  };

  function headerValue(v: string | string[] | undefined): string | undefined {
    const s = Array.isArray(v) ? v[0] : v;
    return s === undefined || s === '' ? undefined : s;
  }

  function toCaller(id: string, e: TokenEntry): CallerToken {
    return {
      id,
      accessor: e.accessor,
      policies: [...e.policies],
      displayName: e.displayName,
      entityId: e.entityId,
      metadata: { ...e.meta },
      namespaceId: e.namespaceId,
      type: e.type,
      ttl: e.ttl,
      numUses: e.numUses,
      boundCidrs: [...e.boundCidrs],
      key: e.key,
      isRoot: e.policies.includes('root'),
      entry: e,
    };
  }
}


/** Path segments that look like tokens (Strongroom's or Vault's prefixes) are masked in logs. */
const TOKEN_SEGMENT = /^(?:sr[sbr]|hv[sbr]|[sbr])\.[A-Za-z0-9_.-]{8,}$/;
export function redactPath(path: string): string {
  return path
    .split('/')
    .map((seg) => (TOKEN_SEGMENT.test(seg) ? '<redacted>' : seg))
    .join('/');
}

/** Physical storage with each operation timed into strongroom_storage_duration_seconds. */
function timedPhysical(p: Physical, metrics: Metrics): Physical {
  const h = metrics.storageDuration;
  return {
    get: (key) => timed(h, { op: 'get' }, () => p.get(key)),
    put: (key, value) => timed(h, { op: 'put' }, () => p.put(key, value)),
    delete: (key) => timed(h, { op: 'delete' }, () => p.delete(key)),
    list: (prefix) => timed(h, { op: 'list' }, () => p.list(prefix)),
    batch: (ops) => timed(h, { op: 'batch' }, () => p.batch(ops)),
    scan: (prefix) => p.scan(prefix),
    close: () => p.close(),
  };
}

/** The barrier with get/put/delete/list timed into strongroom_barrier_duration_seconds; everything else as is. */
function timedBarrier<B extends { get(k: string): Promise<unknown>; put(k: string, v: Uint8Array): Promise<void>; delete(k: string): Promise<void>; list(p: string): Promise<string[]> }>(b: B, metrics: Metrics): B {
  const h = metrics.barrierDuration;
  // Object.create keeps the barrier's getters (`sealed`) live; only the four data operations are wrapped.
  const wrapped = Object.create(b) as B;
  Object.assign(wrapped, {
    get: (k: string) => timed(h, { op: 'get' }, () => b.get(k)),
    put: (k: string, v: Uint8Array) => timed(h, { op: 'put' }, () => b.put(k, v)),
    delete: (k: string) => timed(h, { op: 'delete' }, () => b.delete(k)),
    list: (p: string) => timed(h, { op: 'list' }, () => b.list(p)),
  });
  return wrapped;
}
