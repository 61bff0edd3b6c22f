/**
 * kv v2 storage model, inside the mount's storage view (encrypted by the
 * core's barrier):
 *   config                      mount-wide settings
 *   metadata/<key path>         one JSON record per key: settings and the versions map
 *   versions/<sha256(path)>/<n> the data of version n
 * All three are record kinds of the SDK's record store (cached in this
 * process, dropped on invalidation), so a hot read makes no storage round
 * trip; readers get a copy, since handlers edit the metadata they read. A
 * change touching versions and metadata is one batch.
 * Key paths are addressing, chosen by clients and visible to ACLs; no secret
 * value ever appears in a storage key. Secret values are never logged.
 */
import { createHash } from 'node:crypto';
import { badRequest, codedError, createRecordStore, MAX_BATCH_OPS, type Storage } from '@strongroom/sdk-plugin';
import { z } from 'zod';

const kvConfig = z.object({
  max_versions: z.number().default(0),
  cas_required: z.boolean().default(false),
  /** Seconds; 0 disables automatic deletion. */
  delete_version_after: z.number().default(0),
});
export type KvConfig = z.output<typeof kvConfig>;

const versionMetadata = z.object({
  created_time: z.string(),
  /** RFC 3339, or "" when not deleted. May lie in the future (delete_version_after). */
  deletion_time: z.string(),
  destroyed: z.boolean(),
});
export type VersionMetadata = z.output<typeof versionMetadata>;

const keyMetadata = z.object({
  versions: z.record(z.string(), versionMetadata),
  current_version: z.number(),
  oldest_version: z.number(),
  max_versions: z.number(),
  cas_required: z.boolean(),
  /** Seconds. */
  delete_version_after: z.number(),
  custom_metadata: z.record(z.string(), z.string()).nullable(),
  created_time: z.string(),
  updated_time: z.string(),
});
export type KeyMetadata = z.output<typeof keyMetadata>;

const versionData = z.object({ data: z.record(z.string(), z.unknown()) });

/** Vault's default when neither the key nor the mount sets max_versions. */
const DEFAULT_MAX_VERSIONS = 10;
const DEFAULT_CONFIG: KvConfig = { max_versions: 0, cas_required: false, delete_version_after: 0 };

/** Go's time.RFC3339Nano: fractional seconds with trailing zeros trimmed. */
export function rfc3339Nano(d: Date): string {
  return d.toISOString().replace(/\.(\d*?)0*Z$/, (_m, frac: string) => (frac ? `.${frac}Z` : 'Z'));
}

const versionName = (path: string, n: number) => `${createHash('sha256').update(path).digest('hex')}/${n}`;

/** Records cached per mount (metadata records and version data together). */
const CACHE_MAX = 10_000;

export type KvStore = ReturnType<typeof createKvStore>;

export function createKvStore(deps: { storage: Storage; now?: () => Date; cacheMax?: number }) {
  const now = deps.now ?? (() => new Date());
  const records = createRecordStore(deps.storage, { cacheMax: deps.cacheMax ?? CACHE_MAX });
  const config = records.single('config', kvConfig);
  const metadata = records.kind('metadata/', keyMetadata);
  const versions = records.kind('versions/', versionData);
  /** A version's data removed, as a batch operation. */
  const dropVersion = (path: string, n: number) => versions.deleteOp(versionName(path, n));
  return {
    now,
    getConfig: async (): Promise<KvConfig> => (await config.get()) ?? { ...DEFAULT_CONFIG },
    putConfig: (c: KvConfig) => config.put(c),
    /** The key's metadata, the caller's own copy to change. */
    getMetadata: (path: string) => metadata.get(path),
    putMetadata: (path: string, m: KeyMetadata) => metadata.put(path, m),
    async getVersion(path: string, n: number): Promise<Record<string, unknown> | null> {
      return (await versions.get(versionName(path, n)))?.data ?? null;
    },
    /** Stores the metadata together with version data writes and removals (`putVersion`/`dropVersion` operations), atomically. */
    commit: (path: string, m: KeyMetadata, ops: ReturnType<typeof dropVersion>[] = []) => records.batch([...ops, metadata.putOp(path, m)]),
    putVersion: (path: string, n: number, data: Record<string, unknown>) => versions.putOp(versionName(path, n), { data }),
    dropVersion,
    /** Deletes the key's metadata and every stored version; the metadata goes in the last batch, so a failure leaves it to retry. */
    async deleteKey(path: string, m: KeyMetadata) {
      const ops = Object.keys(m.versions).map((v) => dropVersion(path, Number(v)));
      while (ops.length > 999) await records.batch(ops.splice(0, 999));
      await records.batch([...ops, metadata.deleteOp(path)]);
    },
    listMetadata: (dir: string) => metadata.list({ dir }),
    /** Serializes read-modify-write of one key. */
    withKey: <T>(path: string, fn: () => Promise<T>) => metadata.lock(path, fn),
    /**
     * Copies the key `from` to `to`, or moves it (`move`): its metadata (settings, custom
     * metadata, the version history) and every stored version, in one batch, so no reader and
     * no crash ever sees half of it. The caller holds both keys' locks. Null: `from` does not exist.
     */
    async relocate(from: string, to: string, opts: { move: boolean; overwrite: boolean }): Promise<KeyMetadata | null> {
      const m = await metadata.get(from);
      if (!m) return null;
      const existing = await metadata.get(to);
      if (existing && !opts.overwrite) throw codedError(409, `destination "${to}" already exists; set overwrite to replace it`);
      const ops = existing ? Object.keys(existing.versions).map((v) => dropVersion(to, Number(v))) : [];
      for (const v of Object.keys(m.versions)) {
        const data = await versions.get(versionName(from, Number(v)));
        // Destroyed versions have no data left: their history travels, nothing else.
        if (data) ops.push(versions.putOp(versionName(to, Number(v)), data));
        if (opts.move) ops.push(dropVersion(from, Number(v)));
      }
      ops.push(metadata.putOp(to, m));
      if (opts.move) ops.push(metadata.deleteOp(from));
      if (ops.length > MAX_BATCH_OPS) throw badRequest(`the key has too many versions to ${opts.move ? 'move' : 'copy'} in one atomic batch (${ops.length} storage operations, at most ${MAX_BATCH_OPS})`);
      await records.batch(ops);
      return m;
    },
    invalidate: (key: string) => records.invalidate(key),
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

function effectiveMaxVersions(m: KeyMetadata, c: KvConfig): number {
  if (m.max_versions > 0) return m.max_versions;
  if (c.max_versions > 0) return c.max_versions;
  return DEFAULT_MAX_VERSIONS;
}

/** Documented rule: the key's value, capped by the mount's when both are set. */
function effectiveDeleteAfter(m: KeyMetadata, c: KvConfig): number {
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
  const cas = typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(cas)) throw badRequest('field "options.cas": invalid integer');
  // A negative cas (clients send -1) matches no version: the same mismatch as any other, as in Vault.
  if (cas !== (m?.current_version ?? 0)) throw badRequest('check-and-set parameter did not match the current version');
}

/**
 * Writes `data` as the next version and removes versions beyond the
 * effective max_versions (oldest first), in one batch with the metadata.
 * Caller holds the key's lock.
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
  const ops = [store.putVersion(path, version, data)];
  const keepFrom = version - effectiveMaxVersions(m, c) + 1;
  if (keepFrom > 1) {
    for (const v of Object.keys(m.versions)) {
      if (Number(v) < keepFrom) {
        ops.push(store.dropVersion(path, Number(v)));
        delete m.versions[v];
      }
    }
    m.oldest_version = Math.max(m.oldest_version, keepFrom);
  }
  // The version, the versions it pushes out and the metadata naming them: one batch, so a crash never leaves half of it.
  await store.commit(path, m, ops);
  return m;
}
