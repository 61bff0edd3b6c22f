/**
 * Restore on unseal: every lease back in memory from the due index alone (keys only, nothing
 * decrypted but the bodies of irrevocable leases, which hold their reason), while requests are
 * served: the scan yields to the event loop every few hundred leases, and a lease registered,
 * renewed or revoked meanwhile is already known and skipped. A storage error stops the scan
 * early; leases not loaded yet are still served from storage, and restoring again resumes.
 *
 * The index is written with every body from the first lease on, so a new store needs no
 * migration. (A store from before the index gets it from `sys/leases/tidy`, which gives each
 * body its key; the next unseal then restores those leases.)
 */
import type { Clock, Logger } from '@strongroom/sdk-plugin/host';
import { keyPages, type KeyValueStore } from '../storage/keys.js';
import { decodeEntry, DUE_INDEX_PREFIX, leaseBodyKey, parseDueIndexKey, type LeaseEntry } from './lease-entry.js';
import type { RestoreResult } from './types.js';
import { progressLine } from './progress.js';

export interface RestoreContext {
  store: Pick<KeyValueStore, 'get' | 'scanKeys' | 'scanKeyPages'>;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  clock: Pick<Clock, 'now'>;
  /** Yield to the event loop after this many leases. */
  yieldEvery: number;
  progressEveryMs: number;
  /** How long an irrevocable lease waits before its next try. */
  irrevocableRetryMs: number;
  stopped(): boolean;
  /** Already held in memory, or removed while the restore ran. */
  known(id: string): boolean;
  /**
   * Holds the lease in memory, due at `at`; `irrevocable` when it is (its expire time and reason).
   * False, holding nothing, when it is already known (as `known`).
   */
  hold(id: string, mount: { mountUuid: string; mountPath: string; namespaceId: string; quotaRole?: string | undefined }, at: number, irrevocable: { expireTime: number; reason: string } | null): boolean;
  /** Drops the index keys of a lease whose body is gone. */
  repairDueKeys(id: string, keep: string | null): Promise<void>;
}

export const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export async function restoreLeases(ctx: RestoreContext): Promise<RestoreResult> {
  const { store, logger } = ctx;
  const started = performance.now();
  let loaded = 0;
  let skipped = 0;
  let corrupt = 0;
  let failed = false;
  let sinceYield = 0;
  const line = progressLine(logger, 'restoring leases: progress', ctx.progressEveryMs, () => ({ loaded, skipped, corrupt, elapsedMs: Math.round(performance.now() - started) }));
  /** The body of an irrevocable lease (for its reason); null when it is gone. */
  const irrevocableBody = async (id: string): Promise<LeaseEntry | null> => {
    const bytes = await store.get(leaseBodyKey(id));
    const entry = bytes === null ? null : decodeEntry(bytes);
    return entry && entry.leaseId === id ? entry : null;
  };
  logger.info('restoring leases', { from: 'due index' });
  try {
    // A page of keys at a time, each handled without an await unless it is irrevocable (its body
    // is read) or the event loop is due a turn: per-key awaits cost more than the iteration.
    for await (const page of keyPages(store, DUE_INDEX_PREFIX)) {
      for (const key of page) {
        if (ctx.stopped()) break;
        const item = parseDueIndexKey(key);
        if (!item) {
          corrupt++;
          logger.warn('skipping a malformed lease index key during restore', { key });
        } else if (!item.irrevocable) {
          if (ctx.hold(item.leaseId, item, item.expireTime, null)) loaded++;
          else skipped++;
        } else if (ctx.known(item.leaseId)) {
          skipped++;
        } else {
          const entry = await irrevocableBody(item.leaseId);
          if (entry === null) {
            skipped++;
            await ctx.repairDueKeys(item.leaseId, null);
          } else {
            // An irrevocable lease is tried again after the retry interval, not at its expire time.
            const reason = entry.irrevocableReason;
            const at = reason === null ? entry.expireTime : ctx.clock.now() + ctx.irrevocableRetryMs;
            if (ctx.hold(item.leaseId, entry, at, reason === null ? null : { expireTime: entry.expireTime, reason })) loaded++;
            else skipped++;
          }
        }
        line();
        if (++sinceYield >= ctx.yieldEvery) {
          sinceYield = 0;
          await yieldToEventLoop();
        }
      }
      if (ctx.stopped()) break;
    }
  } catch (error) {
    failed = true;
    logger.error('lease restore stopped by a storage error; leases not yet loaded are still served from storage', {
      error: (error as Error)?.message,
      loaded,
    });
  }
  const durationMs = performance.now() - started;
  logger.info('leases restored', { loaded, skipped, corrupt, failed, durationMs: Math.round(durationMs) });
  return { loaded, skipped, corrupt, failed, durationMs };
}
