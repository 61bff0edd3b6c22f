/**
 * The expiration manager: every secret a plugin hands out becomes a lease here, and every
 * lease ends revoked by its plugin, or kept and reported as irrevocable: never lost.
 *
 * Invariants this module guards:
 * - A lease is stored (body + token index, in one atomic batch) before its id is returned;
 *   when the store refuses, the secret is revoked at once so no credential outlives its record.
 * - Memory holds only id -> (mount ordinal, state) as one small integer, plus the kit's due
 *   scheduler (one timer, armed for the earliest due lease); lease bodies (with the engine's
 *   internal data) are read from the barrier when needed and never logged.
 * - Every change to one lease runs under that lease's lock, so a revocation, a renewal and a
 *   force-removal never interleave on the same body.
 * - Revocations go through per-mount FIFOs served round-robin with per-mount caps: a hanging
 *   or failing backend cannot starve another mount.
 */
import { badRequest, internalError, StrongroomError, unrecoverable, type Logger, type MountTtls, type SecretSpec } from '@strongroom/sdk-plugin/host';
import { z } from 'zod';
import type { PhysicalOp } from '../storage/physical.js';
import type { KeyValueStore } from '../storage/keys.js';
import { systemClock, type Clock } from '@strongroom/sdk-plugin/host';
import { createDueScheduler, createKeyedMutex } from '@strongroom/sdk-plugin/host';
import { createFairQueue } from './fair-queue.js';
import {
  decodeEntry,
  decodeRestoreFields,
  decodeString,
  DUE_INDEX_COMPLETE_KEY,
  DUE_INDEX_PREFIX,
  dueIndexFolder,
  dueIndexKey,
  encodeString,
  isKeySafe,
  isRootNamespace,
  leaseBodyFolder,
  leaseBodyKey,
  leaseIdFromBodyKey,
  LEASE_BODY_PREFIX,
  leaseDeleteOps,
  leaseWriteOps,
  makeLeaseId,
  namespaceOfLeaseId,
  newLeaseOps,
  parseDueIndexKey,
  toLookup,
  tokenIndexFolder,
  TOKEN_INDEX_PREFIX,
  type LeaseEntry,
  type LeaseLookup,
} from './lease-entry.js';

/** What the core does with the owning plugin (HandleRequest with operation revoke or renew). */
export interface Revoker {
  /** Must enforce its own deadline. Throw StrongroomError (user-safe, scrubbed message); `retryable` decides retries. */
  revokeSecret(lease: LeaseEntry): Promise<void>;
  renewSecret(lease: LeaseEntry, increment: number): Promise<RenewSecretResult>;
}

export interface RenewSecretResult {
  /** Seconds the engine grants (0: the increment, else the mount default); capped here by max TTL. */
  ttl: number;
  /** false when the engine says the secret can no longer be renewed. */
  renewable?: boolean;
  data?: Record<string, unknown>;
  warnings?: string[];
}

export interface ExpirationOptions {
  /** Revocations in flight overall. */
  maxInFlight: number;
  /** Revocations in flight for one mount (keep below maxInFlight so a hung mount leaves room). */
  maxInFlightPerMount: number;
  /** First retry delay; doubles per failure, with +-50 % jitter. */
  retryBaseMs: number;
  /** Failures after which a lease becomes irrevocable. */
  maxRevokeAttempts: number;
  /** How often an irrevocable lease is tried again. */
  irrevocableRetryMs: number;
  /** Seconds; used when a mount reports no max TTL (Vault's 32 days). */
  fallbackMaxTtl: number;
  /** Restore yields to the event loop after this many leases, so requests are served meanwhile. */
  restoreYieldEvery: number;
  random: () => number;
}

// Mass expiry is bound by the durable barrier deletes of each revocation; more
// in flight share more of each group-committed fsync (measured with
// core/dist/expiration/bench.js: 8 per mount ~1.5k/s, 32 per mount ~3.6k/s).
export const defaultExpirationOptions: ExpirationOptions = {
  maxInFlight: 64,
  maxInFlightPerMount: 32,
  retryBaseMs: 10_000,
  maxRevokeAttempts: 6,
  irrevocableRetryMs: 24 * 3600 * 1000,
  fallbackMaxTtl: 32 * 24 * 3600,
  restoreYieldEvery: 1000,
  random: Math.random,
};

export interface ExpirationDeps {
  /** The barrier's store (values encrypted by it); the manager writes under sys/expire/ and sys/expire-token/. */
  store: KeyValueStore;
  revoker: Revoker;
  logger: Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;
  /** The mount's default and max lease TTL in seconds, already defaulted to and capped by the system's. */
  mountTtls(mountUuid: string): MountTtls;
  /** Whether the token behind this key (an HMAC of the token) still exists and is unexpired; used by tidy. */
  tokenExists(tokenKey: string): Promise<boolean>;
  /** For include_child_namespaces: is `candidateId` below `ancestorId`? Without it only exact matches count. */
  isDescendantNamespace?(ancestorId: string, candidateId: string): boolean;
  clock?: Clock;
  options?: Partial<ExpirationOptions>;
  /** Metrics hooks, by mount path: each successful revocation (`expired`: the lease ran out its TTL) and each lease that turns irrevocable. */
  /** Lease events for metrics; namespaceId is '' for the root namespace. */
  events?: { revoked?(mountPath: string, expired: boolean, namespaceId: string): void; irrevocable?(mountPath: string, namespaceId: string): void };
  /** How often restore and tidy log their progress; default 5 s. */
  progressEveryMs?: number;
}

export interface RegisterInput {
  /** Mount path relative to its namespace, with trailing slash ("database/"). */
  mountPath: string;
  mountUuid: string;
  /** '' (or 'root') for the root namespace. */
  namespaceId: string;
  /** Request path relative to the mount ("creds/readonly"). */
  requestPath: string;
  secret: SecretSpec;
  /** HMAC of the requesting token ('' when the lease is tied to no token). */
  tokenKey: string;
}

export interface RegisteredLease {
  leaseId: string;
  /** Seconds, after capping. */
  ttl: number;
  renewable: boolean;
  issueTime: number;
  expireTime: number;
  warnings: string[];
}

export interface RenewedLease {
  leaseId: string;
  renewable: boolean;
  /** Seconds. */
  leaseDuration: number;
  data?: Record<string, unknown>;
  warnings: string[];
}

export interface IrrevocableQuery {
  /** '' for root. */
  namespaceId: string;
  includeChildNamespaces: boolean;
}

export interface IrrevocableLease {
  lease_id: string;
  mount_id: string;
  mount_path: string;
  namespace_id: string;
  expire_time: string;
  error: string;
}

export interface IrrevocableList {
  leaseCount: number;
  leases: IrrevocableLease[];
  warnings: string[];
}

export interface IrrevocableCount {
  leaseCount: number;
  /** Per mount uuid. */
  counts: Record<string, number>;
}

export interface RestoreResult {
  loaded: number;
  /** Already known (registered, renewed or revoked while the restore ran). */
  skipped: number;
  /** Corrupt entries logged and left in storage (revoke-force removes them). */
  corrupt: number;
  /** True when a storage error stopped the scan early; calling restore() again resumes safely. */
  failed: boolean;
  durationMs: number;
}

export interface TidyResult {
  scanned: number;
  revoked: number;
  indexEntriesRemoved: number;
  /** Leases whose due-index key was missing or stale, repaired. */
  dueKeysRepaired: number;
}

export interface ExpirationStats {
  leases: number;
  /** Leases waiting on the timer (not queued, not being revoked). */
  scheduled: number;
  queuedRevocations: number;
  inFlightRevocations: number;
  irrevocable: number;
  restoring: boolean;
  revoked: number;
  revokeFailures: number;
}

export interface ExpirationManager {
  register(input: RegisterInput): Promise<RegisteredLease>;
  lookup(leaseId: string): Promise<LeaseLookup>;
  /** One level of lease ids below `prefix` in a namespace ("" lists the mounts), for LIST sys/leases/lookup/:prefix. */
  listPrefix(namespaceId: string, prefix: string): Promise<string[]>;
  renew(leaseId: string, increment: number): Promise<RenewedLease>;
  /** sync: revoke now and throw the backend's error; otherwise queue (persisted) and return. */
  revoke(leaseId: string, opts?: { sync?: boolean }): Promise<void>;
  /** revoke-prefix (force false) and revoke-force (force true: ignores backend errors, removes entries; always sync). Returns the count. */
  revokePrefix(namespaceId: string, prefix: string, opts?: { sync?: boolean; force?: boolean }): Promise<number>;
  /** All leases of a token: queued unless sync. Returns the count. */
  revokeByToken(tokenKey: string, opts?: { sync?: boolean }): Promise<number>;
  tidy(): Promise<TidyResult>;
  /** sys/leases?type=irrevocable: at most `limit` leases (default 10000) with a warning when more exist; 'none' lists all. */
  irrevocable(query: IrrevocableQuery & { limit?: number | 'none' }): IrrevocableList;
  countIrrevocable(query: IrrevocableQuery): IrrevocableCount;
  /** Background restore after unseal: streams the store, never holds lease bodies. */
  restore(): Promise<RestoreResult>;
  /** On seal: stops timers and queues and drops memory. Terminal: make a new manager on unseal. */
  stop(): void;
  stats(): ExpirationStats;
  /** Leases held per mount path (namespace-relative), for the leases gauge. */
  /** Leases held per mount, each mount named by its path and its namespace id ('' for root). */
  countByMount(): Array<{ mountPath: string; namespaceId: string; count: number }>;
  /**
   * Resolves once no revocation is queued or in flight and no restore or lease operation runs
   * (tests, graceful shutdown). A due entry whose timer has not fired yet does not count.
   */
  whenIdle(): Promise<void>;
}

/** Due entries moved to the queue per tick before yielding, so a mass expiry never blocks requests. */
const EXPIRE_CHUNK = 10_000;
const BULK_CONCURRENCY = 16;
const REASON_MAX = 240;
const IRREVOCABLE_LIST_CAP = 10_000;

// A lease in memory is one small integer (a V8 Smi, no object): mount ordinal * 4 + state.
const SCHEDULED = 0;
const QUEUED = 1;
const REVOKING = 2;
const lease = (mount: number, state: number): number => mount * 4 + state;
const mountOf = (v: number): number => v >>> 2;
const stateOf = (v: number): number => v & 3;

interface MountRef {
  uuid: string;
  path: string;
  namespaceId: string;
}

type Outcome = { ok: true } | { ok: false; error: unknown; entry: LeaseEntry | null; corrupt: boolean };

const leaseIdSchema = z.string().min(1, 'lease_id is required').max(4096);
const registerSchema = z.object({
  mountPath: z.string().min(1).max(1024).regex(/^[^/].*\/$/, 'must end with / and not start with /'),
  mountUuid: z.string().min(1).max(128),
  namespaceId: z.string().max(64).refine((s) => s === '' || isKeySafe(s), 'must be key-safe'),
  requestPath: z.string().max(4096),
  tokenKey: z.string().max(256).refine((s) => s === '' || isKeySafe(s), 'must be key-safe'),
  secret: z.object({
    type: z.string().max(256),
    ttl: z.number().finite(),
    maxTtl: z.number().finite(),
    renewable: z.boolean(),
    internalData: z.record(z.string(), z.unknown()),
  }),
});

function parseOr400<T>(schema: z.ZodType<T>, value: unknown, field: string): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const where = issue && issue.path.length > 0 ? `${field}.${issue.path.join('.')}` : field;
  throw badRequest(`invalid ${where}: ${issue?.message ?? 'invalid value'}`);
}

/** A namespace id goes into storage keys: root ('' or 'root') or key-safe, nothing else. */
function namespaceParam(namespaceId: unknown): string {
  const ns = parseOr400(z.string().max(64).refine((s) => s === '' || isKeySafe(s), 'must be key-safe'), namespaceId, 'namespace');
  return isRootNamespace(ns) ? '' : ns;
}

/** User-safe error text: StrongroomError messages are scrubbed by contract, anything else is not shown. */
function errorText(err: unknown): string {
  const text = err instanceof StrongroomError ? err.message : 'internal error';
  return text.length > REASON_MAX ? text.slice(0, REASON_MAX) : text;
}

function isRetryable(err: unknown): boolean {
  return err instanceof StrongroomError ? err.retryable : true;
}

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function forEachLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++]!;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** Due-index keys written per batch while the index is built from the bodies. */
const DUE_INDEX_BUILD_BATCH = 1000;

export function createExpirationManager(deps: ExpirationDeps): ExpirationManager {
  const { store, revoker, logger } = deps;
  const clock = deps.clock ?? systemClock;
  const opts: ExpirationOptions = { ...defaultExpirationOptions, ...deps.options };
  const progressEveryMs = deps.progressEveryMs ?? 5000;

  let index = new Map<string, number>();
  const queue = createFairQueue({ maxInFlight: opts.maxInFlight, maxInFlightPerMount: opts.maxInFlightPerMount });
  const mounts: MountRef[] = [];
  const mountOrdinals = new Map<string, number>();
  let irrevocableLeases = new Map<string, { mount: number; expireTime: number; reason: string }>();
  const locks = createKeyedMutex();

  let pumpQueued = false;
  let stopped = false;
  let restoring: Promise<RestoreResult> | null = null;
  let removedDuringRestore = new Set<string>();
  let tidying = false;
  let revokedCount = 0;
  let failureCount = 0;

  const assertRunning = (): void => {
    if (stopped) throw new StrongroomError('unavailable', 'leases are unavailable while sealed');
  };

  const mountOrdinal = (uuid: string, path: string, namespaceId: string): number => {
    let n = mountOrdinals.get(uuid);
    if (n === undefined) {
      n = mounts.length;
      mounts.push({ uuid, path, namespaceId: isRootNamespace(namespaceId) ? '' : namespaceId });
      mountOrdinals.set(uuid, n);
    }
    return n;
  };

  // ---- the one timer: the kit's due scheduler ----

  /** Due leases join their mount's revocation FIFO; the queue is pumped once per handed-out chunk. */
  const due = createDueScheduler({
    clock,
    chunk: EXPIRE_CHUNK,
    onDue(id) {
      const v = index.get(id);
      if (v === undefined || stateOf(v) !== SCHEDULED) return;
      index.set(id, lease(mountOf(v), QUEUED));
      queue.push(mountOf(v), id);
      if (!pumpQueued) {
        pumpQueued = true;
        queueMicrotask(() => {
          pumpQueued = false;
          pump();
        });
      }
    },
  });

  /** (Re)schedules a lease still held in memory. */
  const schedule = (id: string, at: number): void => {
    const v = index.get(id);
    if (stopped || v === undefined) return;
    index.set(id, lease(mountOf(v), SCHEDULED));
    due.schedule(id, at);
  };

  // ---- per-lease lock ----

  const withLock = <T>(id: string, fn: () => Promise<T>): Promise<T> => locks.run(id, fn);

  // ---- memory bookkeeping ----

  const forget = (id: string): void => {
    index.delete(id);
    due.cancel(id);
    irrevocableLeases.delete(id);
    if (restoring) removedDuringRestore.add(id);
  };

  /** The lease's state, adding it (scheduled, not yet armed) when memory does not hold it; undefined once stopped. */
  const ensureLease = (id: string, entry: LeaseEntry): number | undefined => {
    if (stopped) return undefined;
    let v = index.get(id);
    if (v === undefined) {
      v = lease(mountOrdinal(entry.mountUuid, entry.mountPath, entry.namespaceId), SCHEDULED);
      index.set(id, v);
    }
    return stateOf(v);
  };

  const markIrrevocable = (id: string, expireTime: number, reason: string): void => {
    const v = index.get(id);
    if (!stopped && v !== undefined) irrevocableLeases.set(id, { mount: mountOf(v), expireTime, reason });
  };

  /**
   * Removes a lease's due-index keys other than `keep` and writes `keep` when given: for a lease
   * whose body is gone or corrupt, or whose index key disagrees with its body (written by a
   * race with the one-time index build, or edited). Best effort: a stray key only wakes restore early.
   */
  const repairDueKeys = async (id: string, keep: string | null): Promise<void> => {
    try {
      const ops: PhysicalOp[] = [];
      let kept = false;
      for await (const key of store.scanKeys(dueIndexFolder(id))) {
        if (parseDueIndexKey(key)?.leaseId !== id) continue;
        if (key === keep) kept = true;
        else ops.push({ type: 'delete', key });
      }
      if (keep !== null && !kept) ops.push({ type: 'put', key: keep, value: new Uint8Array(0) });
      if (ops.length > 0) await store.batch(ops);
    } catch (error) {
      logger.warn('could not repair a lease index key', { leaseId: id, error: (error as Error)?.message });
    }
  };

  const backoffMs = (attempts: number): number => opts.retryBaseMs * 2 ** (attempts - 1) * (0.5 + opts.random());

  // ---- revocation ----

  /**
   * Calls the backend and removes the lease. Caller holds the lease lock. `onTimer`: the due
   * scheduler asked, so a body that is not due yet (the index key that scheduled it was stale)
   * is rescheduled, not revoked.
   */
  const attemptRevoke = async (id: string, force: boolean, onTimer = false): Promise<Outcome> => {
    const key = leaseBodyKey(id);
    let bytes: Uint8Array | null;
    try {
      bytes = await store.get(key);
    } catch (error) {
      return { ok: false, error, entry: null, corrupt: false };
    }
    if (bytes === null) {
      forget(id);
      await repairDueKeys(id, null);
      return { ok: true };
    }
    const entry = decodeEntry(bytes);
    if (!entry || entry.leaseId !== id) {
      if (!force) return { ok: false, error: unrecoverable('lease entry is corrupt'), entry: null, corrupt: true };
      try {
        await store.delete(key);
      } catch (error) {
        return { ok: false, error, entry: null, corrupt: true };
      }
      logger.warn('removed a corrupt lease entry', { leaseId: id });
      forget(id);
      await repairDueKeys(id, null);
      return { ok: true };
    }
    if (onTimer && entry.irrevocableReason === null && entry.expireTime > clock.now()) {
      await repairDueKeys(id, dueIndexKey(entry));
      schedule(id, entry.expireTime);
      return { ok: true };
    }
    try {
      await revoker.revokeSecret(entry);
    } catch (error) {
      if (!force) return { ok: false, error, entry, corrupt: false };
      logger.warn('force revocation: ignoring the backend error', { leaseId: id, error: errorText(error) });
    }
    try {
      await store.batch(leaseDeleteOps(entry));
    } catch (error) {
      return { ok: false, error, entry, corrupt: false };
    }
    forget(id);
    revokedCount++;
    // Expired: the timer revoked it at its natural end. A queued revocation moved the expire time
    // earlier; a sync or forced one did not go through the timer at all.
    const expired = onTimer && entry.expireTime >= (entry.lastRenewalTime ?? entry.issueTime) + entry.ttl * 1000;
    deps.events?.revoked?.(entry.mountPath, expired, entry.namespaceId);
    return { ok: true };
  };

  /** After a failed queued revocation: count it, persist, and schedule a retry or mark irrevocable. */
  const recordFailure = async (id: string, outcome: Extract<Outcome, { ok: false }>): Promise<void> => {
    failureCount++;
    const now = clock.now();
    const reason = errorText(outcome.error);
    if (outcome.corrupt) {
      logger.error('lease entry is corrupt; kept as irrevocable until revoke-force', { leaseId: id });
      markIrrevocable(id, now, reason);
      schedule(id, now + opts.irrevocableRetryMs);
      return;
    }
    const entry = outcome.entry;
    const previousDueKey = entry ? dueIndexKey(entry) : null;
    if (!entry) {
      // The store failed before we knew the lease: not the backend's fault, so no attempt is counted.
      logger.warn('lease revocation deferred by a storage error', { leaseId: id, error: (outcome.error as Error)?.message });
      schedule(id, now + backoffMs(1));
      return;
    }
    const attempts = entry.revokeAttempts + 1;
    let due: number;
    if (!isRetryable(outcome.error) || attempts >= opts.maxRevokeAttempts) {
      entry.irrevocableReason = reason;
      markIrrevocable(id, entry.expireTime, reason);
      due = now + opts.irrevocableRetryMs;
      logger.error('lease is irrevocable', { leaseId: id, attempts, error: reason });
      deps.events?.irrevocable?.(entry.mountPath, entry.namespaceId);
    } else {
      due = now + backoffMs(attempts);
      logger.warn('lease revocation failed; will retry', { leaseId: id, attempts, retryInMs: Math.round(due - now), error: reason });
    }
    entry.revokeAttempts = attempts;
    try {
      await store.batch(leaseWriteOps(entry, previousDueKey));
    } catch (error) {
      logger.error('could not record a failed revocation', { leaseId: id, error: (error as Error)?.message });
    }
    schedule(id, due);
  };

  function pump(): void {
    for (;;) {
      if (stopped) return;
      const job = queue.take();
      if (!job) return;
      const v = index.get(job.id);
      if (v === undefined || stateOf(v) !== QUEUED) {
        queue.done(job.mount);
        continue;
      }
      index.set(job.id, lease(mountOf(v), REVOKING));
      void withLock(job.id, async () => {
        // A sync revoke or a force may have finished this lease while it waited.
        const cur = index.get(job.id);
        if (cur === undefined || stateOf(cur) !== REVOKING) return;
        const outcome = await attemptRevoke(job.id, false, true);
        if (!outcome.ok) await recordFailure(job.id, outcome);
      })
        .catch((error: unknown) => {
          logger.error('unexpected error in lease revocation', { leaseId: job.id, error: (error as Error)?.message });
          if (index.has(job.id)) schedule(job.id, clock.now() + backoffMs(1));
        })
        .finally(() => {
          queue.done(job.mount);
          pump();
        });
    }
  }

  /** Queued revocation that survives a restart: the body's expire time becomes now. Caller holds the lock. */
  const markForRevocation = async (id: string): Promise<boolean> => {
    const key = leaseBodyKey(id);
    const bytes = await store.get(key);
    if (bytes === null) {
      forget(id);
      return false;
    }
    const entry = decodeEntry(bytes);
    const now = clock.now();
    if (!entry || entry.leaseId !== id) {
      const v = index.get(id);
      if (v !== undefined && stateOf(v) === SCHEDULED) schedule(id, now);
      return true;
    }
    if (entry.expireTime > now) {
      const previousDueKey = dueIndexKey(entry);
      entry.expireTime = now;
      await store.batch(leaseWriteOps(entry, previousDueKey));
    }
    if (ensureLease(id, entry) === SCHEDULED) schedule(id, now);
    return true;
  };

  const revokeNow = async (id: string, force: boolean): Promise<void> => {
    const outcome = await withLock(id, () => attemptRevoke(id, force));
    if (outcome.ok) return;
    if (outcome.error instanceof StrongroomError) throw outcome.error;
    logger.error('lease revocation failed', { leaseId: id, error: (outcome.error as Error)?.message });
    throw internalError('failed to revoke the lease');
  };

  const loadEntry = async (id: string): Promise<LeaseEntry> => {
    const bytes = await store.get(leaseBodyKey(id));
    if (bytes === null) throw badRequest('invalid lease');
    const entry = decodeEntry(bytes);
    if (!entry || entry.leaseId !== id) throw internalError('lease entry is corrupt');
    return entry;
  };

  // ---- restore ----

  /** The reason an irrevocable lease gives, from its body; null when the body is gone or no longer irrevocable. */
  const irrevocableBody = async (id: string): Promise<LeaseEntry | null> => {
    const bytes = await store.get(leaseBodyKey(id));
    const entry = bytes === null ? null : decodeEntry(bytes);
    return entry && entry.leaseId === id ? entry : null;
  };

  /**
   * Restore on unseal. From the due index when it is complete: keys only, nothing decrypted
   * but the bodies of irrevocable leases. Otherwise (a store written before the index) from the
   * bodies, building the index on the way; once that scan has finished the index is complete.
   */
  const runRestore = async (): Promise<RestoreResult> => {
    const started = performance.now();
    let loaded = 0;
    let skipped = 0;
    let corrupt = 0;
    let failed = false;
    let sinceYield = 0;
    let lastProgress = performance.now();
    const progress = async (): Promise<void> => {
      if (performance.now() - lastProgress >= progressEveryMs) {
        lastProgress = performance.now();
        logger.info('restoring leases: progress', { loaded, skipped, corrupt, elapsedMs: Math.round(lastProgress - started) });
      }
      if (++sinceYield >= opts.restoreYieldEvery) {
        sinceYield = 0;
        await yieldToEventLoop();
      }
    };
    const known = (id: string): boolean => index.has(id) || removedDuringRestore.has(id);
    /** Holds the lease in memory, scheduled at its expire time (an irrevocable one at its next retry). */
    const load = (id: string, f: { mountUuid: string; mountPath: string; namespaceId: string; expireTime: number }, irrevocableReason: string | null): void => {
      index.set(id, lease(mountOrdinal(f.mountUuid, f.mountPath, f.namespaceId), SCHEDULED));
      let at = f.expireTime;
      if (irrevocableReason !== null) {
        markIrrevocable(id, f.expireTime, irrevocableReason);
        at = clock.now() + opts.irrevocableRetryMs;
      }
      due.schedule(id, at);
      loaded++;
    };
    let fromIndex = false;
    try {
      fromIndex = (await store.get(DUE_INDEX_COMPLETE_KEY)) !== null;
      logger.info('restoring leases', { from: fromIndex ? 'due index' : 'lease bodies' });
      if (fromIndex) {
        for await (const key of store.scanKeys(DUE_INDEX_PREFIX)) {
          if (stopped) break;
          const item = parseDueIndexKey(key);
          if (!item) {
            corrupt++;
            logger.warn('skipping a malformed lease index key during restore', { key });
          } else if (known(item.leaseId)) {
            skipped++;
          } else if (!item.irrevocable) {
            load(item.leaseId, item, null);
          } else {
            const entry = await irrevocableBody(item.leaseId);
            if (entry === null) {
              skipped++;
              await repairDueKeys(item.leaseId, null);
            } else if (!known(item.leaseId)) {
              load(item.leaseId, entry, entry.irrevocableReason);
            }
          }
          await progress();
        }
      } else {
        let build: PhysicalOp[] = [];
        for await (const { key, value } of store.scan(LEASE_BODY_PREFIX)) {
          if (stopped) break;
          const id = leaseIdFromBodyKey(key);
          const entry = decodeRestoreFields(value);
          if (id === null || !entry || (entry.leaseId !== null && entry.leaseId !== id)) {
            corrupt++;
            logger.warn('skipping a corrupt lease entry during restore', { key });
          } else if (known(id)) {
            skipped++;
          } else {
            load(id, entry, entry.irrevocableReason);
            // A lease renewed or revoked meanwhile may get a stale key here: harmless (see repairDueKeys).
            build.push({ type: 'put', key: dueIndexKey({ ...entry, leaseId: id }), value: new Uint8Array(0) });
            if (build.length >= DUE_INDEX_BUILD_BATCH) {
              await store.batch(build);
              build = [];
            }
          }
          await progress();
        }
        if (build.length > 0) await store.batch(build);
        if (!stopped) await store.put(DUE_INDEX_COMPLETE_KEY, encodeString('1'));
      }
    } catch (error) {
      failed = true;
      logger.error('lease restore stopped by a storage error; leases not yet loaded are still served from storage', {
        error: (error as Error)?.message,
        loaded,
      });
    }
    const durationMs = performance.now() - started;
    logger.info('leases restored', { loaded, skipped, corrupt, failed, fromIndex, durationMs: Math.round(durationMs) });
    return { loaded, skipped, corrupt, failed, durationMs };
  };

  /**
   * Tidy's pass over the due index: every body gets the key of its state and keys that match no
   * body go, each lease under its lock. Returns how many leases needed a repair.
   */
  const tidyDueIndex = async (): Promise<number> => {
    const suspects = new Set<string>();
    for await (const { key, value } of store.scan(LEASE_BODY_PREFIX)) {
      const entry = decodeEntry(value);
      if (entry && entry.leaseId === leaseIdFromBodyKey(key) && (await store.get(dueIndexKey(entry))) === null) suspects.add(entry.leaseId);
    }
    for await (const key of store.scanKeys(DUE_INDEX_PREFIX)) {
      const item = parseDueIndexKey(key);
      if (item === null) {
        await store.delete(key);
        continue;
      }
      const bytes = await store.get(leaseBodyKey(item.leaseId));
      const entry = bytes === null ? null : decodeEntry(bytes);
      if (entry === null || dueIndexKey(entry) !== key) suspects.add(item.leaseId);
    }
    await forEachLimit([...suspects], BULK_CONCURRENCY, (id) =>
      withLock(id, async () => {
        const bytes = await store.get(leaseBodyKey(id));
        const entry = bytes === null ? null : decodeEntry(bytes);
        await repairDueKeys(id, entry && entry.leaseId === id ? dueIndexKey(entry) : null);
      }),
    );
    return suspects.size;
  };

  // ---- irrevocable reporting ----

  const namespaceFilter = (q: IrrevocableQuery): ((ns: string) => boolean) => {
    const root = namespaceParam(q.namespaceId);
    return (ns) => ns === root || (q.includeChildNamespaces && (deps.isDescendantNamespace?.(root, ns) ?? false));
  };

  return {
    async register(input) {
      assertRunning();
      const parsed = parseOr400(registerSchema, input, 'lease');
      const { defaultTtl, maxTtl: mountMax } = deps.mountTtls(parsed.mountUuid);
      const systemMax = mountMax > 0 ? mountMax : opts.fallbackMaxTtl;
      const maxTtl = Math.floor(parsed.secret.maxTtl > 0 ? Math.min(parsed.secret.maxTtl, systemMax) : systemMax);
      let ttl = Math.floor(parsed.secret.ttl > 0 ? parsed.secret.ttl : defaultTtl > 0 ? defaultTtl : systemMax);
      const warnings: string[] = [];
      if (ttl > maxTtl) {
        warnings.push(`TTL of ${ttl}s exceeded the effective max_ttl of ${maxTtl}s; the TTL is capped to it`);
        ttl = maxTtl;
      }
      const now = clock.now();
      const nsId = isRootNamespace(parsed.namespaceId) ? '' : parsed.namespaceId;
      const entry: LeaseEntry = {
        v: 1,
        leaseId: makeLeaseId(parsed.mountPath, parsed.requestPath, nsId),
        mountPath: parsed.mountPath,
        mountUuid: parsed.mountUuid,
        namespaceId: nsId,
        requestPath: parsed.requestPath,
        secretType: parsed.secret.type,
        internalData: parsed.secret.internalData,
        tokenKey: parsed.tokenKey,
        issueTime: now,
        expireTime: now + ttl * 1000,
        lastRenewalTime: null,
        renewable: parsed.secret.renewable,
        ttl,
        maxTtl,
        revokeAttempts: 0,
        irrevocableReason: null,
      };
      try {
        await store.batch(newLeaseOps(entry));
      } catch (error) {
        // Never hand out a secret we cannot track: revoke it before answering.
        logger.error('could not store a lease; revoking its secret', { mountPath: entry.mountPath, error: (error as Error)?.message });
        try {
          await revoker.revokeSecret(entry);
        } catch (revokeError) {
          logger.error('revoking an unstored secret failed', { mountPath: entry.mountPath, error: errorText(revokeError) });
        }
        throw internalError('failed to store the lease; the secret was revoked');
      }
      if (ensureLease(entry.leaseId, entry) !== undefined) schedule(entry.leaseId, entry.expireTime);
      return { leaseId: entry.leaseId, ttl, renewable: entry.renewable, issueTime: now, expireTime: entry.expireTime, warnings };
    },

    async lookup(leaseId) {
      assertRunning();
      const id = parseOr400(leaseIdSchema, leaseId, 'lease_id');
      return toLookup(await loadEntry(id), clock.now());
    },

    async listPrefix(namespaceId, prefix) {
      assertRunning();
      const ns = namespaceParam(namespaceId);
      let p = parseOr400(z.string().max(4096), prefix, 'prefix');
      if (p !== '' && !p.endsWith('/')) p += '/';
      return store.list(leaseBodyFolder(ns, p));
    },

    async renew(leaseId, increment) {
      assertRunning();
      const id = parseOr400(leaseIdSchema, leaseId, 'lease_id');
      const inc = parseOr400(z.number().int().nonnegative(), increment, 'increment');
      if (id.startsWith('auth/')) throw badRequest('tokens cannot be renewed through this endpoint; use auth/token/renew');
      return withLock(id, async () => {
        const entry = await loadEntry(id);
        const now = clock.now();
        const v = index.get(id);
        if (entry.irrevocableReason !== null) throw badRequest('lease is irrevocable and cannot be renewed');
        if ((v !== undefined && stateOf(v) !== SCHEDULED) || entry.expireTime <= now) throw badRequest('lease expired');
        if (!entry.renewable) throw badRequest('lease is not renewable');
        const granted = await revoker.renewSecret(entry, inc);
        const { defaultTtl, maxTtl: mountMax } = deps.mountTtls(entry.mountUuid);
        // Max TTL runs from issue time and follows a mount tuned down since issue.
        const limit = Math.min(entry.maxTtl, mountMax > 0 ? mountMax : opts.fallbackMaxTtl);
        const remaining = Math.max(0, Math.floor((entry.issueTime + limit * 1000 - now) / 1000));
        let ttl = Math.floor(granted.ttl > 0 ? granted.ttl : inc > 0 ? inc : defaultTtl > 0 ? defaultTtl : limit);
        const warnings = [...(granted.warnings ?? [])];
        if (ttl > remaining) {
          warnings.push(`TTL of ${ttl}s exceeded the effective max_ttl of ${limit}s from issue; the TTL is capped to ${remaining}s`);
          ttl = remaining;
        }
        const previousDueKey = dueIndexKey(entry);
        entry.ttl = ttl;
        entry.lastRenewalTime = now;
        entry.expireTime = now + ttl * 1000;
        if (granted.renewable === false) entry.renewable = false;
        await store.batch(leaseWriteOps(entry, previousDueKey));
        if (ensureLease(id, entry) === SCHEDULED) schedule(id, entry.expireTime);
        return {
          leaseId: id,
          renewable: entry.renewable,
          leaseDuration: ttl,
          ...(granted.data ? { data: granted.data } : {}),
          warnings,
        };
      });
    },

    async revoke(leaseId, o = {}) {
      assertRunning();
      const id = parseOr400(leaseIdSchema, leaseId, 'lease_id');
      if (o.sync) return revokeNow(id, false);
      await withLock(id, () => markForRevocation(id));
    },

    async revokePrefix(namespaceId, prefix, o = {}) {
      assertRunning();
      const raw = parseOr400(z.string().min(1, 'prefix is required').max(4096), prefix, 'prefix');
      const ns = namespaceParam(namespaceId);
      let ids: string[];
      if (namespaceOfLeaseId(raw) === ns && (await store.get(leaseBodyKey(raw))) !== null) {
        ids = [raw];
      } else {
        // "db/creds" must not match "db/creds-other/...": prefixes are whole path segments.
        const folder = leaseBodyFolder(ns, raw.endsWith('/') ? raw : `${raw}/`);
        ids = [];
        for await (const key of store.scanKeys(folder)) {
          const id = leaseIdFromBodyKey(key);
          if (id !== null) ids.push(id);
        }
      }
      if (o.force || o.sync) {
        const failures: unknown[] = [];
        await forEachLimit(ids, BULK_CONCURRENCY, async (id) => {
          const outcome = await withLock(id, () => attemptRevoke(id, o.force === true));
          if (!outcome.ok) failures.push(outcome.error);
        });
        if (failures.length > 0) {
          const first = failures[0];
          const code = first instanceof StrongroomError ? first.code : 'internal';
          throw new StrongroomError(code, `failed to revoke ${failures.length} of ${ids.length} leases under the prefix: ${errorText(first)}`);
        }
      } else {
        await forEachLimit(ids, BULK_CONCURRENCY, async (id) => {
          await withLock(id, () => markForRevocation(id));
        });
      }
      logger.info('revoked leases by prefix', { prefix: raw, count: ids.length, force: o.force === true, sync: o.sync === true });
      return ids.length;
    },

    async revokeByToken(tokenKey, o = {}) {
      assertRunning();
      const tk = parseOr400(z.string().min(1).max(256).refine(isKeySafe, 'must be key-safe'), tokenKey, 'token key');
      const refs: { key: string; id: string }[] = [];
      for await (const { key, value } of store.scan(tokenIndexFolder(tk))) refs.push({ key, id: decodeString(value) });
      const failures: unknown[] = [];
      await forEachLimit(refs, BULK_CONCURRENCY, async ({ key, id }) => {
        if (o.sync) {
          const outcome = await withLock(id, () => attemptRevoke(id, false));
          if (!outcome.ok) failures.push(outcome.error);
          // Also drops an index entry left behind by a lease that was already gone.
          else await store.delete(key);
        } else {
          const present = await withLock(id, () => markForRevocation(id));
          if (!present) await store.delete(key);
        }
      });
      if (failures.length > 0) {
        const first = failures[0];
        throw new StrongroomError(first instanceof StrongroomError ? first.code : 'internal', `failed to revoke ${failures.length} leases of the token: ${errorText(first)}`);
      }
      return refs.length;
    },

    async tidy() {
      assertRunning();
      if (restoring) throw new StrongroomError('unavailable', 'cannot tidy leases while they are being restored');
      if (tidying) throw new StrongroomError('conflict', 'a lease tidy is already running');
      tidying = true;
      try {
        const known = new Map<string, boolean>();
        const tokenValid = async (tk: string): Promise<boolean> => {
          if (tk === '') return false;
          let v = known.get(tk);
          if (v === undefined) {
            v = await deps.tokenExists(tk);
            known.set(tk, v);
          }
          return v;
        };
        let scanned = 0;
        let lastProgress = performance.now();
        logger.info('tidy: started');
        const doomed: string[] = [];
        for await (const { key, value } of store.scan(LEASE_BODY_PREFIX)) {
          scanned++;
          const entry = decodeEntry(value);
          if (!entry) {
            logger.warn('tidy: skipping a corrupt lease entry', { key });
            continue;
          }
          if (!(await tokenValid(entry.tokenKey))) doomed.push(entry.leaseId);
          if (scanned % 10_000 === 0 || performance.now() - lastProgress >= progressEveryMs) {
            lastProgress = performance.now();
            logger.info('tidy: scanning leases', { scanned, toRevoke: doomed.length });
          }
        }
        logger.info('tidy: scan done', { scanned, toRevoke: doomed.length });
        let revoked = 0;
        let done = 0;
        await forEachLimit(doomed, BULK_CONCURRENCY, async (id) => {
          const outcome = await withLock(id, () => attemptRevoke(id, true));
          if (outcome.ok) revoked++;
          else logger.error('tidy: could not remove a lease', { leaseId: id, error: (outcome.error as Error)?.message });
          if (++done % 10_000 === 0 || performance.now() - lastProgress >= progressEveryMs) {
            lastProgress = performance.now();
            logger.info('tidy: revoking leases', { done, of: doomed.length, revoked });
          }
        });
        const danglingKeys: string[] = [];
        for await (const { key, value } of store.scan(TOKEN_INDEX_PREFIX)) {
          const slash = key.indexOf('/', TOKEN_INDEX_PREFIX.length);
          const tk = slash === -1 ? '' : key.slice(TOKEN_INDEX_PREFIX.length, slash);
          const id = decodeString(value);
          if (!(await tokenValid(tk)) || (await store.get(leaseBodyKey(id))) === null) danglingKeys.push(key);
        }
        for (let i = 0; i < danglingKeys.length; i += 500) {
          await store.batch(danglingKeys.slice(i, i + 500).map((key) => ({ type: 'delete' as const, key })));
        }
        const dueKeysRepaired = await tidyDueIndex();
        logger.info('tidy finished', { scanned, revoked, indexEntriesRemoved: danglingKeys.length, dueKeysRepaired });
        return { scanned, revoked, indexEntriesRemoved: danglingKeys.length, dueKeysRepaired };
      } finally {
        tidying = false;
      }
    },

    irrevocable(q) {
      assertRunning();
      const include = namespaceFilter(q);
      const ids: string[] = [];
      for (const [id, info] of irrevocableLeases) if (include(mounts[info.mount]!.namespaceId)) ids.push(id);
      ids.sort();
      const warnings: string[] = [];
      const cap = q.limit === 'none' ? Infinity : parseOr400(z.number().int().nonnegative(), q.limit ?? IRREVOCABLE_LIST_CAP, 'limit');
      if (ids.length > cap) {
        warnings.push(`${ids.length} irrevocable leases exist; only ${cap} are listed, use limit=none to list them all`);
      }
      if (restoring) warnings.push('leases are still being restored; this list may be incomplete');
      const leases = ids.slice(0, Math.min(ids.length, cap)).map((id): IrrevocableLease => {
        const info = irrevocableLeases.get(id)!;
        const mount = mounts[info.mount]!;
        return {
          lease_id: id,
          mount_id: mount.uuid,
          mount_path: mount.path,
          namespace_id: mount.namespaceId,
          expire_time: new Date(info.expireTime).toISOString(),
          error: info.reason,
        };
      });
      return { leaseCount: ids.length, leases, warnings };
    },

    countIrrevocable(q) {
      assertRunning();
      const include = namespaceFilter(q);
      const counts: Record<string, number> = {};
      let leaseCount = 0;
      for (const info of irrevocableLeases.values()) {
        const mount = mounts[info.mount]!;
        if (!include(mount.namespaceId)) continue;
        counts[mount.uuid] = (counts[mount.uuid] ?? 0) + 1;
        leaseCount++;
      }
      return { leaseCount, counts };
    },

    restore() {
      assertRunning();
      if (!restoring) {
        restoring = runRestore().finally(() => {
          restoring = null;
          removedDuringRestore = new Set();
        });
      }
      return restoring;
    },

    stop() {
      if (stopped) return;
      stopped = true;
      due.stop();
      due.clear();
      index = new Map();
      irrevocableLeases = new Map();
      removedDuringRestore = new Set();
      queue.clear();
    },

    countByMount() {
      const perOrdinal = new Map<number, number>();
      for (const v of index.values()) perOrdinal.set(mountOf(v), (perOrdinal.get(mountOf(v)) ?? 0) + 1);
      const out = new Map<string, { mountPath: string; namespaceId: string; count: number }>();
      for (const [ord, n] of perOrdinal) {
        const m = mounts[ord];
        const key = `${m?.namespaceId ?? ''}\u0000${m?.path ?? 'unknown'}`;
        const cur = out.get(key) ?? { mountPath: m?.path ?? 'unknown', namespaceId: m?.namespaceId ?? '', count: 0 };
        cur.count += n;
        out.set(key, cur);
      }
      return [...out.values()];
    },

    stats() {
      return {
        leases: index.size,
        scheduled: due.size(),
        queuedRevocations: queue.queued(),
        inFlightRevocations: queue.inFlight(),
        irrevocable: irrevocableLeases.size,
        restoring: restoring !== null,
        revoked: revokedCount,
        revokeFailures: failureCount,
      };
    },

    async whenIdle() {
      for (;;) {
        const busy = !stopped && (due.busy() || restoring !== null || queue.queued() > 0 || queue.inFlight() > 0 || locks.size() > 0);
        if (!busy) return;
        await yieldToEventLoop();
      }
    },
  };
}
