/**
 * The mount tables (secrets engines at `sys/mounts`, auth methods at
 * `sys/auth`) and the router over them. Tables are persisted in the barrier
 * per namespace (`<ns prefix>core/mounts`, `<ns prefix>core/auth`); each
 * mount's storage lives under `<ns prefix>logical/<uuid>/` or
 * `<ns prefix>auth/<uuid>/`. Routing is the longest mount prefix inside the
 * namespace.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { badRequest, type MountInfo, type MountTtls } from '@strongroom/sdk-plugin/host';
import type { Physical } from '../storage/physical.js';

export type MountTableKind = 'mounts' | 'auth';

export interface MountConfig {
  /** Seconds; 0 = system default. */
  default_lease_ttl: number;
  max_lease_ttl: number;
  force_no_cache: boolean;
  audit_non_hmac_request_keys: string[];
  audit_non_hmac_response_keys: string[];
  listing_visibility: string;
  passthrough_request_headers: string[];
  allowed_response_headers: string[];
  token_type?: string;
}

export interface MountEntry {
  uuid: string;
  accessor: string;
  /** Path inside its table, with trailing slash: "transit/" (auth: "approle/"). */
  path: string;
  type: string;
  description: string;
  config: MountConfig;
  options: Record<string, string>;
  /** Pinned plugin version ("" = the built-in / default). */
  plugin_version: string;
  local: boolean;
  seal_wrap: boolean;
  external_entropy_access: boolean;
  namespace_id: string;
  table: MountTableKind;
  /** System mounts (sys/, auth/token/, cubbyhole/) cannot be removed or moved. */
  system?: boolean;
  created_at: number;
}

function defaultMountConfig(): MountConfig {
  return {
    default_lease_ttl: 0,
    max_lease_ttl: 0,
    force_no_cache: false,
    audit_non_hmac_request_keys: [],
    audit_non_hmac_response_keys: [],
    listing_visibility: '',
    passthrough_request_headers: [],
    allowed_response_headers: [],
  };
}

/** Path used for routing: secrets mounts as-is, auth mounts under "auth/". */
export function routePath(e: Pick<MountEntry, 'path' | 'table'>): string {
  return e.table === 'auth' ? `auth/${e.path}` : e.path;
}

export function storagePrefixOf(e: Pick<MountEntry, 'uuid' | 'table'>, nsPrefix: string): string {
  return `${nsPrefix}${e.table === 'auth' ? 'auth' : 'logical'}/${e.uuid}/`;
}

const infoCache = new WeakMap<MountEntry, MountInfo>();

/**
 * The engine's view of a mount. One object per mount while nothing in it
 * changes (a tune replaces `options`, a remount changes the path), shared by
 * every request to the mount: nobody may mutate it.
 */
export function mountInfoOf(e: MountEntry, namespacePath: string): MountInfo {
  const path = routePath(e);
  const cached = infoCache.get(e);
  if (cached && cached.path === path && cached.options === e.options && cached.namespace === namespacePath && cached.type === e.type) return cached;
  const info: MountInfo = Object.freeze({ path, type: e.type, uuid: e.uuid, accessor: e.accessor, namespace: namespacePath, options: e.options, isAuth: e.table === 'auth' });
  infoCache.set(e, info);
  return info;
}

/** A mount's lease TTLs in seconds: its tuned values capped by the system's (0 or no mount: the system's). */
export function mountTtls(entry: MountEntry | undefined, system: MountTtls): MountTtls {
  const maxTtl = Math.min(entry?.config.max_lease_ttl || system.maxTtl, system.maxTtl);
  const defaultTtl = Math.min(entry?.config.default_lease_ttl || system.defaultTtl, maxTtl);
  return { defaultTtl, maxTtl };
}

/** "foo", "/foo/", "foo//bar" -> "foo/", "foo/bar/". */
export function normalizeMountPath(p: string): string {
  const parts = p.split('/').filter((s) => s.length > 0);
  if (parts.length === 0) throw badRequest('path: a mount path is required');
  for (const s of parts) {
    if (s === '.' || s === '..') throw badRequest(`path: invalid segment "${s}"`);
    // No whitespace or control characters: `sys/mounts/%20` made a mount named " /" that no client can address sanely.
    if (/[\s\x00-\x1f\x7f]/.test(s)) throw badRequest(`path: invalid segment ${JSON.stringify(s)}: no whitespace or control characters`);
  }
  return `${parts.join('/')}/`;
}

/** Paths that can never be used for a user mount (Vault's protected mounts). */
const RESERVED_SECRET_PREFIXES = ['sys/', 'auth/', 'cubbyhole/', 'identity/'];

export function newMountEntry(
  table: MountTableKind,
  path: string,
  fields: { type: string; description?: string; config?: Partial<MountConfig>; options?: Record<string, string>; plugin_version?: string; local?: boolean; seal_wrap?: boolean; external_entropy_access?: boolean },
  namespaceId: string,
): MountEntry {
  return {
    uuid: randomUUID(),
    accessor: `${fields.type.replace(/[^a-z0-9]/gi, '_')}_${randomBytes(4).toString('hex')}`,
    path,
    type: fields.type,
    description: fields.description ?? '',
    config: { ...defaultMountConfig(), ...(fields.config ?? {}) },
    options: fields.options ?? {},
    plugin_version: fields.plugin_version ?? '',
    local: fields.local ?? false,
    seal_wrap: fields.seal_wrap ?? false,
    external_entropy_access: fields.external_entropy_access ?? false,
    namespace_id: namespaceId,
    table,
    created_at: Date.now(),
  };
}

export interface RouteMatch<T> {
  entry: MountEntry;
  /** Route path of the mount ("secret/", "auth/approle/"). */
  mountPath: string;
  /** The rest of the request path, relative to the mount. */
  relativePath: string;
  handle: T;
}

/**
 * Router of one process: namespace id -> route path -> (entry, handle). The
 * handle is whatever the core attaches (its backend binding).
 */
export interface Router<T> {
  add(entry: MountEntry, handle: T): void;
  remove(namespaceId: string, routePath: string): void;
  match(namespaceId: string, path: string): RouteMatch<T> | undefined;
  get(namespaceId: string, routePath: string): { entry: MountEntry; handle: T } | undefined;
  byUuid(uuid: string): { entry: MountEntry; handle: T } | undefined;
  entries(namespaceId?: string): MountEntry[];
  /** A path that would overlap an existing mount (one a prefix of the other). */
  conflict(namespaceId: string, routePath: string): string | undefined;
  clear(): void;
}

export function createRouter<T>(): Router<T> {
  const byNs = new Map<string, Map<string, { entry: MountEntry; handle: T }>>();
  const uuids = new Map<string, { entry: MountEntry; handle: T }>();
  return {
    add(entry, handle) {
      let m = byNs.get(entry.namespace_id);
      if (!m) byNs.set(entry.namespace_id, (m = new Map()));
      const v = { entry, handle };
      m.set(routePath(entry), v);
      uuids.set(entry.uuid, v);
    },
    remove(namespaceId, rp) {
      const m = byNs.get(namespaceId);
      const v = m?.get(rp);
      if (!m || !v) return;
      m.delete(rp);
      uuids.delete(v.entry.uuid);
    },
    match(namespaceId, path) {
      const m = byNs.get(namespaceId);
      if (!m) return undefined;
      // Walk '/' boundaries from the longest prefix down: O(depth) map lookups.
      let idx = path.lastIndexOf('/');
      while (idx !== -1) {
        const prefix = path.slice(0, idx + 1);
        const v = m.get(prefix);
        if (v) return { entry: v.entry, mountPath: prefix, relativePath: path.slice(prefix.length), handle: v.handle };
        idx = path.lastIndexOf('/', idx - 1);
      }
      // A request for the mount itself without trailing slash ("secret").
      const v = m.get(`${path}/`);
      if (v) return { entry: v.entry, mountPath: `${path}/`, relativePath: '', handle: v.handle };
      return undefined;
    },
    get: (ns, rp) => byNs.get(ns)?.get(rp),
    byUuid: (u) => uuids.get(u),
    entries(ns) {
      if (ns !== undefined) return [...(byNs.get(ns)?.values() ?? [])].map((v) => v.entry);
      return [...uuids.values()].map((v) => v.entry);
    },
    conflict(ns, rp) {
      for (const existing of byNs.get(ns)?.keys() ?? []) {
        if (existing.startsWith(rp) || rp.startsWith(existing)) return existing;
      }
      return undefined;
    },
    clear() {
      byNs.clear();
      uuids.clear();
    },
  };
}

export function checkReservedPath(table: MountTableKind, path: string): void {
  if (table === 'mounts' && RESERVED_SECRET_PREFIXES.some((p) => path === p || path.startsWith(p))) {
    throw badRequest(`path: cannot mount at reserved path "${path}"`);
  }
  if (table === 'auth' && path === 'token/') {
    throw badRequest('path: the token auth method is always mounted at auth/token/');
  }
}

/** Persistence of a mount table in the barrier. */
export function createMountTableStore(store: Pick<Physical, 'get' | 'put'>) {
  const keyOf = (nsPrefix: string, table: MountTableKind) => `${nsPrefix}core/${table}`;
  return {
    async load(nsPrefix: string, table: MountTableKind): Promise<MountEntry[]> {
      const raw = await store.get(keyOf(nsPrefix, table));
      if (!raw) return [];
      return (JSON.parse(Buffer.from(raw).toString('utf8')) as { entries: MountEntry[] }).entries;
    },
    async save(nsPrefix: string, table: MountTableKind, entries: MountEntry[]): Promise<void> {
      await store.put(keyOf(nsPrefix, table), Buffer.from(JSON.stringify({ entries }), 'utf8'));
    },
  };
}
