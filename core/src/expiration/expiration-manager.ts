/**
 * The expiration manager: the one due-revocation service. Every secret a plugin hands out, and
 * every expiring service token, is a lease here (OpenBao's shape: a token's lease lives under
 * its creation path); every lease ends revoked (by its plugin, or by the token store for a
 * token) or kept and reported as irrevocable: never lost.
 *
 * Invariants this module guards:
 * - A lease is stored (body + token index, in one atomic batch) before its id is returned;
 *   when the store refuses, the secret is revoked at once so no credential outlives its record.
 *   A token's lease is written in the same batch as the token itself.
 * - Memory holds only id -> (mount ordinal, state) as one small integer, plus the kit's due
 *   scheduler (one timer, armed for the earliest due lease); lease bodies (with the engine's
 *   internal data) are read from the barrier when needed and never logged.
 * - Every change to one lease runs under that lease's lock, so a revocation, a renewal and a
 *   force-removal never interleave on the same body (a token lease's other writes hold the
 *   token's lock instead: see putTokenLease).
 * - Revocations go through per-mount FIFOs served round-robin with per-mount caps: a hanging
 *   or failing backend cannot starve another mount. A failure is retried with exponential
 *   backoff and jitter, then the lease is irrevocable.
 *
 * Its concerns live beside it: TTL policy (ttl-policy.ts), restore (restore.ts), tidy
 * (tidy.ts), irrevocable reports (irrevocable.ts), the stored shape (lease-entry.ts).
 * What remains (a little over the project's 600 lines) is one concept: a lease's life
 * (issue, renew, queue, revoke, retry, give up), whose transitions share the per-lease lock.
 */
import { badRequest, createDueScheduler, createKeyedMutex, internalError, StrongroomError, systemClock, unrecoverable } from '@strongroom/sdk-plugin/host';
import { z } from 'zod';
import type { PhysicalOp } from '../storage/physical.js';
import { createFairQueue } from './fair-queue.js';
import { countIrrevocable, listIrrevocable, type MountRef } from './irrevocable.js';
import { createLeaseTable, QUEUED, REVOKING, SCHEDULED } from './lease-table.js';
import {
  decodeEntry,
  decodeString,
  dueIndexFolder,
  dueIndexKey,
  isKeySafe,
  isRootNamespace,
  leaseBodyFolder,
  leaseBodyKey,
  leaseIdFromBodyKey,
  leaseDeleteOps,
  leaseWriteOps,
  makeLeaseId,
  namespaceOfLeaseId,
  newLeaseOps,
  parseDueIndexKey,
  toLookup,
  tokenIndexFolder,
  tokenLeaseEntry,
  type LeaseEntry,
} from './lease-entry.js';
import { restoreLeases, yieldToEventLoop } from './restore.js';
import { BULK_CONCURRENCY, forEachLimit, tidyLeases } from './tidy.js';
import { issueTtl, renewTtl } from './ttl-policy.js';
import { errorText, isRetryable, leaseIdSchema, namespaceParam, parseOr400, registerSchema, tokenLeaseSchema } from './validate.js';
import type { ExpirationDeps, ExpirationManager, ExpirationOptions, IrrevocableQuery, RestoreResult, TokenLease } from './types.js';
import { progressLine } from './progress.js';

export type * from './types.js';

// Mass expiry is bound by the durable barrier deletes of each revocation; more
// in flight share more of each group-committed fsync (measured with
// scripts/bench/lease-bench.js: 8 per mount ~1.5k/s, 32 per mount ~3.6k/s).
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

/** Due entries moved to the queue per tick before yielding, so a mass expiry never blocks requests. */
const EXPIRE_CHUNK = 10_000;
const IRREVOCABLE_LIST_CAP = 10_000;

type Outcome = { ok: true } | { ok: false; error: unknown; entry: LeaseEntry | null; corrupt: boolean };

export function createExpirationManager(deps: ExpirationDeps): ExpirationManager {
  const { store, revoker, logger } = deps;
  const clock = deps.clock ?? systemClock;
  const opts: ExpirationOptions = { ...defaultExpirationOptions, ...deps.options };
  const progressEveryMs = deps.progressEveryMs ?? 5000;
  const revokeToken = async (tokenKey: string): Promise<void> => {
    if (!deps.revokeToken) throw unrecoverable('no token store to revoke a token lease');
    await deps.revokeToken(tokenKey);
  };

  const held = deps.events?.held;
  const dropped = deps.events?.dropped;
  const table = createLeaseTable({
    ...(held ? { held: (id: string, m: MountRef, role: string | undefined) => held(id, { mountPath: m.path, namespaceId: m.namespaceId, ...(role ? { role } : {}) }) } : {}),
    ...(dropped ? { dropped: (id: string, m: MountRef) => dropped(id, { mountPath: m.path, namespaceId: m.namespaceId }) } : {}),
  });
  let restoredOnce: () => void = () => undefined;
  const firstRestore = new Promise<void>((resolve) => (restoredOnce = resolve));
  const queue = createFairQueue({ maxInFlight: opts.maxInFlight, maxInFlightPerMount: opts.maxInFlightPerMount });
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

  // ---- the one timer: the kit's due scheduler ----

  /** Due leases join their mount's revocation FIFO; the queue is pumped once per handed-out chunk. */
  const due = createDueScheduler({
    clock,
    chunk: EXPIRE_CHUNK,
    onDue(id) {
      if (table.state(id) !== SCHEDULED) return;
      table.setState(id, QUEUED);
      queue.push(table.mountOf(id)!, id);
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
    if (stopped || !table.setState(id, SCHEDULED)) return;
    due.schedule(id, at);
  };

  // ---- per-lease lock ----

  const withLock = <T>(id: string, fn: () => Promise<T>): Promise<T> => locks.run(id, fn);

  // ---- memory bookkeeping ----

  const forget = (id: string): void => {
    table.forget(id);
    due.cancel(id);
    if (restoring) removedDuringRestore.add(id);
  };

  /** The lease's state, adding it (scheduled, not yet armed) when memory does not hold it; undefined once stopped. */
  const ensureLease = (id: string, entry: LeaseEntry): number | undefined => {
    return stopped ? undefined : table.hold(id, entry);
  };

  const markIrrevocable = (id: string, expireTime: number, reason: string): void => {
    if (!stopped) table.markIrrevocable(id, expireTime, reason);
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
      if (entry.kind === 'token') await revokeToken(entry.tokenKey);
      else await revoker.revokeSecret(entry);
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
    deps.events?.revoked?.(entry.mountPath, expired, entry.namespaceId, { leaseId: id, token: entry.kind === 'token' });
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
      if (table.state(job.id) !== QUEUED) {
        queue.done(job.mount);
        continue;
      }
      table.setState(job.id, REVOKING);
      void withLock(job.id, async () => {
        // A sync revoke or a force may have finished this lease while it waited.
        if (table.state(job.id) !== REVOKING) return;
        const outcome = await attemptRevoke(job.id, false, true);
        if (!outcome.ok) await recordFailure(job.id, outcome);
      })
        .catch((error: unknown) => {
          logger.error('unexpected error in lease revocation', { leaseId: job.id, error: (error as Error)?.message });
          if (table.has(job.id)) schedule(job.id, clock.now() + backoffMs(1));
        })
        .finally(() => {
          queue.done(job.mount);
          pump();
        });
    }
  }

  /**
   * Queued revocation that survives a restart: the body's expire time becomes now. Caller holds
   * the lock. Answers what it marked ('gone' when there is no such lease).
   */
  const markForRevocation = async (id: string): Promise<'gone' | 'secret' | 'token'> => {
    const key = leaseBodyKey(id);
    const bytes = await store.get(key);
    if (bytes === null) {
      forget(id);
      return 'gone';
    }
    const entry = decodeEntry(bytes);
    const now = clock.now();
    if (!entry || entry.leaseId !== id) {
      if (table.state(id) === SCHEDULED) schedule(id, now);
      return 'secret';
    }
    if (entry.expireTime > now) {
      const previousDueKey = dueIndexKey(entry);
      entry.expireTime = now;
      await store.batch(leaseWriteOps(entry, previousDueKey));
    }
    if (ensureLease(id, entry) === SCHEDULED) schedule(id, now);
    return entry.kind === 'token' ? 'token' : 'secret';
  };

  /** A queued revocation; a token's is carried out at once (queued, it would stay usable until its turn), and stays queued if that fails. */
  const queueRevocation = async (id: string): Promise<'gone' | 'secret' | 'token'> => {
    const kind = await withLock(id, () => markForRevocation(id));
    if (kind === 'token') await withLock(id, () => attemptRevoke(id, false));
    return kind;
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

  // ---- restore and tidy (restore.ts, tidy.ts) ----

  const runRestore = (): Promise<RestoreResult> =>
    restoreLeases({
      store,
      logger,
      clock,
      yieldEvery: opts.restoreYieldEvery,
      progressEveryMs,
      irrevocableRetryMs: opts.irrevocableRetryMs,
      stopped: () => stopped,
      known: (id) => table.has(id) || removedDuringRestore.has(id),
      hold(id, m, at, irrevocable) {
        if (removedDuringRestore.size > 0 && removedDuringRestore.has(id)) return false;
        // One lookup, not a `has` before the hold: restore calls this a million times.
        const before = table.size();
        table.hold(id, m);
        if (table.size() === before) return false;
        if (irrevocable) markIrrevocable(id, irrevocable.expireTime, irrevocable.reason);
        due.schedule(id, at);
        return true;
      },
      repairDueKeys,
    });

  /** The due-index key a lease's body calls for (null when the body is gone or corrupt). */
  const dueKeyOfBody = async (id: string): Promise<string | null> => {
    const bytes = await store.get(leaseBodyKey(id));
    const entry = bytes === null ? null : decodeEntry(bytes);
    return entry && entry.leaseId === id ? dueIndexKey(entry) : null;
  };

  // ---- irrevocable reporting (irrevocable.ts) ----

  const namespaceFilter = (q: IrrevocableQuery): ((ns: string) => boolean) => {
    const root = namespaceParam(q.namespaceId);
    return (ns) => ns === root || (q.includeChildNamespaces && (deps.isDescendantNamespace?.(root, ns) ?? false));
  };

  /** The due-index keys of a lease other than `keep`, as deletes. */
  const staleDueKeyOps = async (id: string, keep: string | null): Promise<PhysicalOp[]> => {
    const ops: PhysicalOp[] = [];
    for await (const key of store.scanKeys(dueIndexFolder(id))) {
      if (key !== keep && parseDueIndexKey(key)?.leaseId === id) ops.push({ type: 'delete', key });
    }
    return ops;
  };

  return {
    async register(input) {
      assertRunning();
      const parsed = parseOr400(registerSchema, input, 'lease');
      const { ttl, maxTtl, warnings } = issueTtl(parsed.secret, { ...deps.mountTtls(parsed.mountUuid), fallbackMaxTtl: opts.fallbackMaxTtl });
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
      deps.events?.issued?.(entry.leaseId, entry.mountPath, entry.namespaceId, ttl);
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
      return withLock(id, async () => {
        const entry = await loadEntry(id);
        if (entry.kind === 'token') throw badRequest('tokens cannot be renewed through this endpoint; use auth/token/renew');
        const now = clock.now();
        const state = table.state(id);
        if (entry.irrevocableReason !== null) throw badRequest('lease is irrevocable and cannot be renewed');
        if ((state !== undefined && state !== SCHEDULED) || entry.expireTime <= now) throw badRequest('lease expired');
        if (!entry.renewable) throw badRequest('lease is not renewable');
        const granted = await revoker.renewSecret(entry, inc);
        const { ttl, warnings } = renewTtl(entry, granted.ttl, inc, { ...deps.mountTtls(entry.mountUuid), fallbackMaxTtl: opts.fallbackMaxTtl }, now);
        warnings.unshift(...(granted.warnings ?? []));
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
      await queueRevocation(id);
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
      let done = 0;
      const progress = progressLine(logger, 'revoking leases by prefix: progress', progressEveryMs, () => ({ prefix: raw, done, of: ids.length }));
      if (o.force || o.sync) {
        const failures: unknown[] = [];
        await forEachLimit(ids, BULK_CONCURRENCY, async (id) => {
          const outcome = await withLock(id, () => attemptRevoke(id, o.force === true));
          if (!outcome.ok) failures.push(outcome.error);
          done++;
          progress();
        });
        if (failures.length > 0) {
          const first = failures[0];
          const code = first instanceof StrongroomError ? first.code : 'internal';
          throw new StrongroomError(code, `failed to revoke ${failures.length} of ${ids.length} leases under the prefix: ${errorText(first)}`);
        }
      } else {
        await forEachLimit(ids, BULK_CONCURRENCY, async (id) => {
          await queueRevocation(id);
          done++;
          progress();
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
          if ((await queueRevocation(id)) === 'gone') await store.delete(key);
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
        return await tidyLeases({
          store,
          logger,
          progressEveryMs,
          tokenExists: deps.tokenExists,
          forceRevoke: (id) => withLock(id, () => attemptRevoke(id, true)),
          repairDueKeys: (id) => withLock(id, async () => repairDueKeys(id, await dueKeyOfBody(id))),
        });
      } finally {
        tidying = false;
      }
    },

    irrevocable(q) {
      assertRunning();
      const cap = q.limit === 'none' ? Infinity : parseOr400(z.number().int().nonnegative(), q.limit ?? IRREVOCABLE_LIST_CAP, 'limit');
      return listIrrevocable(table.irrevocable, table.mounts, namespaceFilter(q), cap, restoring !== null);
    },

    countIrrevocable(q) {
      assertRunning();
      return countIrrevocable(table.irrevocable, table.mounts, namespaceFilter(q));
    },

    async putTokenLease(l, ops, fresh = false) {
      assertRunning();
      const entry = tokenLeaseEntry(parseOr400(tokenLeaseSchema, l, 'token lease'));
      // A renewal rewrites the lease: it keeps the role it was counted under.
      const quotaRole = deps.quotaRole?.(entry.leaseId);
      if (quotaRole) entry.quotaRole = quotaRole;
      const dueKey = dueIndexKey(entry);
      await store.batch([...ops, ...leaseWriteOps(entry, null), ...(fresh ? [] : await staleDueKeyOps(entry.leaseId, dueKey))]);
      if (ensureLease(entry.leaseId, entry) === SCHEDULED) schedule(entry.leaseId, entry.expireTime);
    },

    async dropTokenLease(leaseId, ops) {
      assertRunning();
      await store.batch([...ops, { type: 'delete', key: leaseBodyKey(leaseId) }, ...(await staleDueKeyOps(leaseId, null))]);
      forget(leaseId);
    },

    restore() {
      assertRunning();
      if (!restoring) {
        restoring = runRestore().finally(() => {
          restoredOnce();
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
      table.clear();
      removedDuringRestore = new Set();
      queue.clear();
    },

    countByMount: () => table.countByMount(),

    eachLease(fn) {
      table.forEach((id, m) => fn(id, { mountPath: m.path, namespaceId: m.namespaceId }));
    },

    restored: () => firstRestore,

    stats() {
      return {
        leases: table.size(),
        scheduled: due.size(),
        queuedRevocations: queue.queued(),
        inFlightRevocations: queue.inFlight(),
        irrevocable: table.irrevocable.size,
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
