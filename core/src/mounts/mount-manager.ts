/**
 * Enabling, disabling and tuning mounts (sys/mounts and sys/auth), and
 * binding each mount to its backend. Binding never blocks: a mount whose
 * plugin is starting answers after it is ready, one whose plugin failed
 * answers a clear 503, and neither holds up unseal or other mounts.
 */
import { badRequest, permissionDenied, type Backend, type BackendDescription } from '@strongroom/sdk-plugin/host';
import type { CoreLogger } from '../log/logger.js';
import type { Namespace, NamespaceRegistry } from '../namespace/namespaces.js';
import { compileSpecialPaths, type PathMatcher } from './special-paths.js';
import {
  checkReservedPath,
  createMountTableStore,
  newMountEntry,
  normalizeMountPath,
  routePath,
  type MountConfig,
  type MountEntry,
  type MountTableKind,
  type Router,
} from './mount-table.js';
import type { Physical } from '../storage/physical.js';

/** What the router holds for each mount. */
export interface MountBinding {
  /** The mount's backend once its plugin is running; null while starting or failed. */
  backend: Backend | null;
  status: 'starting' | 'running' | 'failed' | 'degraded';
  /** User-safe reason when failed/degraded. */
  error?: string;
  unauthenticated: PathMatcher;
  root: PathMatcher;
  description?: BackendDescription;
  /** Resolves when the backend finished starting (or failed). */
  ready: Promise<void>;
  /**
   * Holds the mount for one request: returns its release, or null once the mount
   * is being disabled (the request then sees no mount). A disable waits for every
   * holder to release before it revokes and deletes the mount's data.
   */
  acquire(): (() => void) | null;
}

/**
 * The mount's backend once its plugin has started; undefined when it failed or
 * is degraded. A mount still starting (just after unseal) is waited for, not refused.
 */
export async function runningBackend(binding: MountBinding): Promise<Backend | undefined> {
  if (binding.status === 'starting') await binding.ready;
  return binding.status === 'running' && binding.backend ? binding.backend : undefined;
}

/** Creates the backend of a mount: in-process for system types, a plugin process otherwise. */
export type BackendResolver = (entry: MountEntry, namespace: Namespace) => Promise<{ backend: Backend; description: BackendDescription; runningVersion: string }>;

export interface EnableInput {
  type: string;
  description?: string;
  config?: Partial<MountConfig>;
  options?: Record<string, string>;
  plugin_version?: string;
  local?: boolean;
  seal_wrap?: boolean;
  external_entropy_access?: boolean;
}

/** The mounts every namespace starts with (sys/, auth/token/). */
export type DefaultMounts = (ns: Namespace) => Array<{ table: MountTableKind; path: string; input: EnableInput; system: boolean }>;

export interface MountManager {
  /** Loads both tables of every namespace and binds them (system mounts first). */
  load(defaults: DefaultMounts): Promise<void>;
  /** Loads (or, for a new namespace, creates) one namespace's tables with its default mounts, and binds them. */
  loadNamespace(ns: Namespace, defaults: DefaultMounts): Promise<void>;
  /** Removes every mount of a namespace being deleted, the system ones too, with their storage. */
  unloadNamespace(ns: Namespace): Promise<void>;
  enable(table: MountTableKind, ns: Namespace, path: string, input: EnableInput): Promise<MountEntry>;
  disable(table: MountTableKind, ns: Namespace, path: string): Promise<void>;
  /**
   * A new `plugin_version` is a switch without downtime: the mount keeps serving from
   * its process until the new version's is ready for it, and keeps it (with its entry
   * unchanged) when that fails, answering why.
   */
  tune(table: MountTableKind, ns: Namespace, path: string, patch: { config?: Partial<MountConfig>; description?: string; options?: Record<string, string>; plugin_version?: string }): Promise<MountEntry>;
  /**
   * Moves a mount (`auth/x` paths move auth methods) to a free path in the same
   * table. Its storage is keyed by its uuid, so its data moves with it; its
   * leases and login tokens keep working (they name the mount by uuid).
   */
  remount(ns: Namespace, from: string, to: string): Promise<MountEntry>;
  get(table: MountTableKind, ns: Namespace, path: string): MountEntry | undefined;
  list(table: MountTableKind, ns: Namespace): MountEntry[];
  runningVersion(uuid: string): string;
  /**
   * After sys/plugins/reload/backend switched a plugin's processes: each mount's
   * binding takes what the new process described; a mount that had failed is started again.
   */
  rebind(filter: (e: MountEntry) => boolean): Promise<void>;
  unloadAll(): Promise<void>;
}

/** Types that exist once per namespace, mounted by the core itself (Vault's singleton mounts). */
const SINGLETON_TYPES = new Set(['system', 'token', 'cubbyhole']);

/** How long a disable waits for the requests in flight on the mount (a plugin call's own deadline is 30 s). */
const DRAIN_MS = 30_000;

export function createMountManager(deps: {
  store: Pick<Physical, 'get' | 'put' | 'delete' | 'list' | 'scan' | 'scanKeys' | 'batch'>;
  router: Router<MountBinding>;
  namespaces: NamespaceRegistry;
  resolve: BackendResolver;
  /**
   * Revokes every lease the mount issued, synchronously, while its plugin still
   * runs (Vault's order: credentials never outlive their mount). A failure
   * keeps the mount.
   */
  revokeLeases(entry: MountEntry, ns: Namespace): Promise<void>;
  /** Called after a mount is enabled and its backend started (change events). */
  onEnable?(entry: MountEntry, ns: Namespace): void;
  /** Called after a mount is removed and its leases revoked: stop its plugin, drop its storage. */
  onDisable(entry: MountEntry, ns: Namespace): Promise<void>;
  logger: CoreLogger;
}): MountManager {
  const tables = createMountTableStore(deps.store);
  const running = new Map<string, string>();
  const backends = new Map<string, Backend>();

  /** Per binding: requests holding it, and whether a disable closed it. */
  const holds = new WeakMap<MountBinding, { count: number; closed: boolean; idle: (() => void) | null }>();

  /** Closes a binding to new requests and resolves once the ones holding it are done (or after `DRAIN_MS`). */
  function drain(binding: MountBinding): Promise<void> {
    const h = holds.get(binding);
    if (!h) return Promise.resolve();
    h.closed = true;
    if (h.count === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      // A request stuck in a hung plugin must not hold the disable forever: the
      // plugin call deadline ends it anyway, and the storage is closed below it.
      const timer = setTimeout(resolve, DRAIN_MS);
      timer.unref();
      h.idle = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  function reopen(binding: MountBinding): void {
    const h = holds.get(binding);
    if (h) {
      h.closed = false;
      h.idle = null;
    }
  }

  /** Closes the mount to new requests, lets those inside finish, then revokes its leases; reopens it if that fails. */
  async function closeAndRevoke(found: { entry: MountEntry; handle: MountBinding }, ns: Namespace, rp: string): Promise<void> {
    await drain(found.handle);
    try {
      await deps.revokeLeases(found.entry, ns);
    } catch (err) {
      reopen(found.handle);
      throw badRequest(`failed to revoke the leases of "${rp}", so it stays mounted ("lease revoke -force -prefix" drops them without the engine): ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  function bind(entry: MountEntry, ns: Namespace): MountBinding {
    let resolveReady!: () => void;
    const h = { count: 0, closed: false, idle: null as (() => void) | null };
    const binding: MountBinding = {
      backend: null,
      status: 'starting',
      unauthenticated: () => false,
      root: () => false,
      ready: new Promise<void>((r) => (resolveReady = r)),
      acquire() {
        if (h.closed) return null;
        h.count++;
        let released = false;
        return () => {
          if (released) return;
          released = true;
          if (--h.count === 0 && h.idle) h.idle();
        };
      },
    };
    holds.set(binding, h);
    deps.router.add(entry, binding);
    deps
      .resolve(entry, ns)
      .then((resolved) => adopt(binding, entry, resolved))
      .catch((err: unknown) => {
        binding.status = 'failed';
        binding.error = `mount "${routePath(entry)}" (${entry.type}) failed to start: ${err instanceof Error ? err.message : String(err)}`;
        deps.logger.error('mount failed to start', { path: routePath(entry), type: entry.type, error: String(err) });
      })
      .finally(resolveReady);
    return binding;
  }

  /** Points a binding at a (new) backend: its special paths, description and running version with it. */
  function adopt(binding: MountBinding, entry: MountEntry, { backend, description, runningVersion }: Awaited<ReturnType<BackendResolver>>): void {
    const special = backend.specialPaths();
    binding.unauthenticated = compileSpecialPaths(special.unauthenticated);
    binding.root = compileSpecialPaths(special.root);
    binding.description = description;
    binding.backend = backend;
    binding.status = 'running';
    delete binding.error;
    running.set(entry.uuid, runningVersion);
    backends.set(entry.uuid, backend);
  }

  const entriesOf = (table: MountTableKind, ns: Namespace) => deps.router.entries(ns.id).filter((e) => e.table === table);
  const persist = (table: MountTableKind, ns: Namespace) => tables.save(deps.namespaces.storagePrefix(ns), table, entriesOf(table, ns));

  async function cleanupBackend(uuid: string) {
    const b = backends.get(uuid);
    backends.delete(uuid);
    running.delete(uuid);
    if (b) await b.cleanup().catch(() => undefined);
  }

  async function loadNamespace(ns: Namespace, defaults: DefaultMounts): Promise<void> {
    const prefix = deps.namespaces.storagePrefix(ns);
    for (const table of ['mounts', 'auth'] as const) {
      let entries = await tables.load(prefix, table);
      const missing = defaults(ns).filter((d) => d.table === table && !entries.some((e) => e.path === d.path));
      if (missing.length > 0) {
        entries = [...missing.map((d) => ({ ...newMountEntry(table, d.path, d.input, ns.id), system: d.system })), ...entries];
        await tables.save(prefix, table, entries);
      }
      for (const e of entries) bind(e, ns);
    }
  }

  return {
    async load(defaults) {
      for (const ns of deps.namespaces.all()) await loadNamespace(ns, defaults);
    },
    loadNamespace,
    async unloadNamespace(ns) {
      for (const e of deps.router.entries(ns.id)) {
        deps.router.remove(ns.id, routePath(e));
        await deps.onDisable(e, ns);
        await cleanupBackend(e.uuid);
      }
    },
    async enable(table, ns, rawPath, input) {
      const path = normalizeMountPath(rawPath);
      checkReservedPath(table, path);
      if (!input.type) throw badRequest('type: a mount type is required');
      // Vault's answer and status: these are never mounted by a request, anywhere.
      if (SINGLETON_TYPES.has(input.type)) throw permissionDenied(`mount type of "${input.type}" is not mountable`);
      const rp = table === 'auth' ? `auth/${path}` : path;
      const conflict = deps.router.conflict(ns.id, rp);
      if (conflict) throw badRequest(`path is already in use at ${conflict}`);
      const entry = newMountEntry(table, path, input, ns.id);
      const binding = bind(entry, ns);
      try {
        await persist(table, ns);
      } catch (err) {
        deps.router.remove(ns.id, rp);
        throw err;
      }
      await binding.ready;
      if (binding.status === 'failed') {
        // A mount whose plugin cannot start is refused at enable time (e.g. sha256 mismatch), not left half-made.
        deps.router.remove(ns.id, rp);
        await persist(table, ns);
        throw badRequest(binding.error ?? 'the plugin failed to start');
      }
      deps.onEnable?.(entry, ns);
      return entry;
    },
    async disable(table, ns, rawPath) {
      const path = normalizeMountPath(rawPath);
      const rp = table === 'auth' ? `auth/${path}` : path;
      const found = deps.router.get(ns.id, rp);
      if (!found || found.entry.table !== table) return;
      // Vault's text: sys/, cubbyhole/ and auth/token/ stay.
      if (found.entry.system) throw badRequest(`cannot unmount "${rp}"`);
      // Requests already inside the mount finish (their leases get registered, so
      // they are revoked too); the plugin is still there to revoke them.
      await closeAndRevoke(found, ns, rp);
      deps.router.remove(ns.id, rp);
      await persist(table, ns);
      await deps.onDisable(found.entry, ns);
      await cleanupBackend(found.entry.uuid);
    },
    async tune(table, ns, rawPath, patch) {
      const path = normalizeMountPath(rawPath);
      const rp = table === 'auth' ? `auth/${path}` : path;
      const found = deps.router.get(ns.id, rp);
      if (!found || found.entry.table !== table) throw badRequest(`no mount at "${rp}"`);
      const e = found.entry;
      if (patch.options?.version && e.options.version && patch.options.version !== e.options.version && e.type === 'kv' && patch.options.version === '1') {
        throw badRequest('options.version: a kv version 2 mount cannot be downgraded to version 1');
      }
      const versionChanged = patch.plugin_version !== undefined && patch.plugin_version !== e.plugin_version;
      // kv reads its version at setup, and 1 -> 2 moves its data (kv enable-versioning): the mount is set up again.
      // Checked first: a setup that fails would leave the mount without its engine.
      if (e.type === 'kv' && patch.options?.version !== undefined && !['1', '2'].includes(patch.options.version)) throw badRequest('options.version: kv version must be 1 or 2');
      const optionsChanged = e.type === 'kv' && patch.options?.version !== undefined && patch.options.version !== (e.options.version || '1');
      if (versionChanged || optionsChanged) {
        // The supervisor moves the mount once the new version's process is ready for it; the old one serves until then.
        const next = { ...e, ...(versionChanged ? { plugin_version: patch.plugin_version! } : {}), options: { ...e.options, ...patch.options } };
        let resolved: Awaited<ReturnType<BackendResolver>>;
        try {
          resolved = await deps.resolve(next, ns);
        } catch (err) {
          const was = running.get(e.uuid);
          if (!versionChanged) throw badRequest(`options: "${rp}" could not be set up with them, so it is unchanged: ${err instanceof Error ? err.message : String(err)}`);
          throw badRequest(
            `plugin_version: ${patch.plugin_version || 'the latest version'} of ${e.type} did not start, so "${rp}" ${was ? `still runs ${was}` : 'is unchanged'}: ${err instanceof Error ? err.message : String(err)}`,
          );
        }
        if (versionChanged) e.plugin_version = patch.plugin_version!;
        adopt(found.handle, e, resolved);
      }
      if (patch.config) e.config = { ...e.config, ...patch.config };
      if (patch.description !== undefined) e.description = patch.description;
      if (patch.options) e.options = { ...e.options, ...patch.options };
      await persist(table, ns);
      return e;
    },
    async remount(ns, rawFrom, rawTo) {
      const side = (p: string) => {
        const n = normalizeMountPath(p);
        return n.startsWith('auth/') ? { table: 'auth' as const, path: normalizeMountPath(n.slice('auth/'.length)), rp: n } : { table: 'mounts' as const, path: n, rp: n };
      };
      const src = side(rawFrom);
      const dst = side(rawTo);
      if (src.table !== dst.table) throw badRequest('to: cannot move a mount between the secrets and auth tables');
      const found = deps.router.get(ns.id, src.rp);
      if (!found || found.entry.table !== src.table || routePath(found.entry) !== src.rp) throw badRequest(`from: no mount at "${src.rp}"`);
      if (found.entry.system) throw badRequest(`from: cannot remount "${src.rp}"`);
      checkReservedPath(dst.table, dst.path);
      const conflict = deps.router.conflict(ns.id, dst.rp);
      if (conflict) throw badRequest(`to: path is already in use at ${conflict}`);
      const e = found.entry;
      // As Vault: a move revokes the mount's leases (secrets) or tokens (auth methods) first.
      await closeAndRevoke(found, ns, src.rp);
      deps.router.remove(ns.id, src.rp);
      const oldPath = e.path;
      e.path = dst.path;
      try {
        await persist(src.table, ns);
      } catch (err) {
        e.path = oldPath;
        throw err;
      } finally {
        // Bound again under the new path: the engine learns its new mount path.
        backends.delete(e.uuid);
        await bind(e, ns).ready;
      }
      return e;
    },
    get(table, ns, rawPath) {
      const path = normalizeMountPath(rawPath);
      const found = deps.router.get(ns.id, table === 'auth' ? `auth/${path}` : path);
      return found && found.entry.table === table ? found.entry : undefined;
    },
    list: (table, ns) => entriesOf(table, ns),
    runningVersion: (uuid) => running.get(uuid) ?? '',
    async rebind(filter) {
      const targets = deps.router.entries().filter(filter);
      await Promise.all(
        targets.map(async (e) => {
          const ns = deps.namespaces.byId(e.namespace_id);
          const binding = deps.router.byUuid(e.uuid)?.handle;
          if (!ns || !binding) return;
          const backend = binding.backend;
          if (backend) {
            adopt(binding, e, { backend, description: backend.describe(), runningVersion: running.get(e.uuid) ?? '' });
            return;
          }
          if (binding.status !== 'failed') return; // still starting: that start serves it
          try {
            adopt(binding, e, await deps.resolve(e, ns));
          } catch (err) {
            binding.error = `mount "${routePath(e)}" (${e.type}) failed to start: ${err instanceof Error ? err.message : String(err)}`;
          }
        }),
      );
    },
    async unloadAll() {
      const uuids = [...backends.keys()];
      await Promise.all(uuids.map((u) => cleanupBackend(u)));
      deps.router.clear();
    },
  };
}
