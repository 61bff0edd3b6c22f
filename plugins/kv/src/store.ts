/**
 * kv v2 storage model, inside the mount's storage view (encrypted by the
 * core's barrier):
 *   config                      mount-wide settings (cached in memory, dropped on invalidate)
 *   metadata/<key path>         one JSON record per key: settings and the versions map
 *   versions/<sha256(path)>/<n> the data of version n
 * Metadata and version data are also cached in this process (the SDK's read
 * cache: every write goes through it, and the core's invalidation drops a
 * key), so a hot read makes no storage round trip. Readers get a copy: the
 * handlers edit the metadata they read before writing it back.
 * Key paths are addressing, chosen by clients and visible to ACLs; no secret
 * value ever appears in a storage key. Secret values are never logged.
 */
import { createHash } from 'node:crypto';
import { badRequest, createKeyedMutex, type Storage } from '@strongroom/sdk-plugin';
import { getJSON, putJSON, createReadCache } from '@strongroom/sdk-plugin/host';

export interface KvConfig {
  max_versions: number;
  cas_required: boolean;
  /** Seconds; 0 disables automatic deletion. */
  delete_version_after: number;
}

export interface VersionMetadata {
  created_time: string;
  /** RFC 3339, or "" when not deleted. May lie in the future (delete_version_after). */
  deletion_time: string;
  destroyed: boolean;
}

export interface KeyMetadata {
  versions: Record<string, VersionMetadata>;
  current_version: number;
  oldest_version: number;
  max_versions: number;
  cas_required: boolean;
  /** Seconds. */
  delete_version_after: number;
  custom_metadata: Record<string, string> | null;
  created_time: string;
  updated_time: string;
}

/** Vault's default when neither the key nor the mount sets max_versions. */
export const DEFAULT_MAX_VERSIONS = 10;
const DEFAULT_CONFIG: KvConfig = { max_versions: 0, cas_required: false, delete_version_after: 0 };

/** Go's time.RFC3339Nano: fractional seconds with trailing zeros trimmed. */
export function rfc3339Nano(d: Date): string {
  return d.toISOString().replace(/\.(\d*?)0*Z$/, (_m, frac: string) => (frac ? `.${frac}Z` : 'Z'));
}

export interface KvStore {
  now(): Date;
  getConfig(): Promise<KvConfig>;
  putConfig(c: KvConfig): Promise<void>;
  getMetadata(path: string): Promise<KeyMetadata | null>;
  putMetadata(path: string, m: KeyMetadata): Promise<void>;
  getVersion(path: string, version: number): Promise<Record<string, unknown> | null>;
  putVersion(path: string, version: number, data: Record<string, unknown>): Promise<void>;
  deleteVersion(path: string, version: number): Promise<void>;
  /** Deletes the key's metadata and every stored version. */
  deleteKey(path: string, m: KeyMetadata): Promise<void>;
  listMetadata(dir: string): Promise<string[]>;
  /** Serializes read-modify-write of one key. */
  withKey<T>(path: string, fn: () => Promise<T>): Promise<T>;
  invalidate(key: string): void;
}

const versionKey = (path: string, n: number) => `versions/${createHash('sha256').update(path).digest('hex')}/${n}`;

/** Entries cached per mount (metadata records and version data together). */
const CACHE_MAX = 10_000;

export function createKvStore(deps: { storage: Storage; now?: () => Date; cacheMax?: number }): KvStore {
  const { storage } = deps;
  const now = deps.now ?? (() => new Date());
  const mutex = createKeyedMutex();
  const cache = createReadCache<object>({ max: deps.cacheMax ?? CACHE_MAX });
  const cachedJSON = async <T extends object>(key: string): Promise<T | null> => {
    const v = await cache.get(key, () => getJSON<T>(storage, key));
    return v === null ? null : (structuredClone(v) as T);
  };
  const write = (key: string, value: object) => cache.write(key, () => putJSON(storage, key, value));
  const remove = (key: string) => cache.write(key, () => storage.delete(key));
  let config: KvConfig | null = null;
  return {
    now,
    async getConfig() {
      config ??= { ...DEFAULT_CONFIG, ...((await getJSON<KvConfig>(storage, 'config')) ?? {}) };
      return config;
    },
    async putConfig(c) {
      await putJSON(storage, 'config', c);
      config = c;
    },
    getMetadata: (path) => cachedJSON<KeyMetadata>(`metadata/${path}`),
    putMetadata: (path, m) => write(`metadata/${path}`, m),
    async getVersion(path, n) {
      const v = await cachedJSON<{ data: Record<string, unknown> }>(versionKey(path, n));
      return v ? v.data : null;
    },
    putVersion: (path, n, data) => write(versionKey(path, n), { data }),
    deleteVersion: (path, n) => remove(versionKey(path, n)),
    async deleteKey(path, m) {
      for (const v of Object.keys(m.versions)) await remove(versionKey(path, Number(v)));
      await remove(`metadata/${path}`);
    },
    listMetadata: (dir) => storage.list(`metadata/${dir}`),
    withKey: (path, fn) => mutex.run(path, fn),
    invalidate(key) {
      if (key === 'config') config = null;
      else cache.drop(key);
    },
  };
}

/** The key path of a data/metadata/... request: present and not a directory. */
export function keyPath(path: string): string {
  if (path === '') throw badRequest('missing path');
  if (path.endsWith('/')) throw badRequest('invalid path: a secret path must not end in "/"');
  return path;
}

/** Directory prefix for a LIST ("" or ending in "/"). */
export function dirPrefix(path: string): string {
  return path === '' || path.endsWith('/') ? path : `${path}/`;
}

export function effectiveMaxVersions(m: KeyMetadata, c: KvConfig): number {
  if (m.max_versions > 0) return m.max_versions;
  if (c.max_versions > 0) return c.max_versions;
  return DEFAULT_MAX_VERSIONS;
}

/** Documented rule: the key's value, capped by the mount's when both are set. */
export function effectiveDeleteAfter(m: KeyMetadata, c: KvConfig): number {
  if (m.delete_version_after > 0 && c.delete_version_after > 0) return Math.min(m.delete_version_after, c.delete_version_after);
  return m.delete_version_after > 0 ? m.delete_version_after : c.delete_version_after;
}

export function isDeleted(v: VersionMetadata, now: Date): boolean {
  return v.deletion_time !== '' && Date.parse(v.deletion_time) <= now.getTime();
}

export function newMetadata(now: Date): KeyMetadata {
  const t = rfc3339Nano(now);
  return {
    versions: {},
    current_version: 0,
    oldest_version: 0,
    max_versions: 0,
    cas_required: false,
    delete_version_after: 0,
    custom_metadata: null,
    created_time: t,
    updated_time: t,
  };
}

/** The `metadata` block of a data read or write response. */
export function versionResponse(m: KeyMetadata, version: number): Record<string, unknown> {
  const v = m.versions[String(version)];
  return {
    created_time: v?.created_time ?? '',
    custom_metadata: m.custom_metadata,
    deletion_time: v?.deletion_time ?? '',
    destroyed: v?.destroyed ?? false,
    version,
  };
}

/**
 * A version as data/ and subkeys/ read it (`requested` 0 = the current one):
 * null when the key or version does not exist; `data` null when the version
 * is deleted or destroyed (Vault answers 404 with the version's metadata).
 */
export async function readVersion(
  store: KvStore,
  path: string,
  requested: number,
): Promise<{ metadata: Record<string, unknown>; data: Record<string, unknown> | null } | null> {
  const m = await store.getMetadata(path);
  if (!m) return null;
  const version = requested || m.current_version;
  const v = m.versions[String(version)];
  if (!v) return null;
  const metadata = versionResponse(m, version);
  if (v.destroyed || isDeleted(v, store.now())) return { metadata, data: null };
  const data = await store.getVersion(path, version);
  return data ? { metadata, data } : null;
}

/**
 * Check-and-set as Vault documents it: required when the mount or the key
 * says so; `cas: 0` writes only if the key has no version yet; otherwise it
 * must equal the current version.
 */
export function checkCas(options: Record<string, unknown> | undefined, m: KeyMetadata | null, c: KvConfig): void {
  const raw = options?.cas;
  const required = c.cas_required || (m?.cas_required ?? false);
  if (raw === undefined || raw === null) {
    if (required) throw badRequest('check-and-set parameter required for this call');
    return;
  }
  const cas = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(cas) || cas < 0) throw badRequest('field "options.cas": invalid integer');
  if (cas !== (m?.current_version ?? 0)) throw badRequest('check-and-set parameter did not match the current version');
}

/**
 * Writes `data` as the next version, then removes versions beyond the
 * effective max_versions (oldest first). Caller holds the key's lock.
 */
export async function writeVersion(store: KvStore, path: string, existing: KeyMetadata | null, data: Record<string, unknown>): Promise<KeyMetadata> {
  const now = store.now();
  const c = await store.getConfig();
  const m = existing ?? newMetadata(now);
  const version = m.current_version + 1;
  const dva = effectiveDeleteAfter(m, c);
  m.versions[String(version)] = {
    created_time: rfc3339Nano(now),
    deletion_time: dva > 0 ? rfc3339Nano(new Date(now.getTime() + dva * 1000)) : '',
    destroyed: false,
  };
  m.current_version = version;
  m.updated_time = rfc3339Nano(now);
  await store.putVersion(path, version, data);
  const keepFrom = version - effectiveMaxVersions(m, c) + 1;
  if (keepFrom > 1) {
    for (const v of Object.keys(m.versions)) {
      if (Number(v) < keepFrom) {
        await store.deleteVersion(path, Number(v));
        delete m.versions[v];
      }
    }
    m.oldest_version = Math.max(m.oldest_version, keepFrom);
  }
  await store.putMetadata(path, m);
  return m;
}
