/**
 * Lease tidy (sys/leases/tidy): removes what no live token owns and repairs the indexes.
 * - a lease whose token is gone or expired is revoked, ignoring backend errors (the token's
 *   own revocation already asked the backend; a token lease whose token is gone has nothing
 *   left to revoke);
 * - token-index entries that point at no lease or no live token go;
 * - every body gets the due-index key of its state, and keys that match no body go (a store
 *   written before the due index gets its index this way).
 * Each lease is acted on under its lock, through the manager's own revocation path.
 */
import type { Logger } from '@strongroom/sdk-plugin/host';
import type { KeyValueStore } from '../storage/keys.js';
import { decodeEntry, decodeString, DUE_INDEX_PREFIX, dueIndexKey, leaseBodyKey, leaseIdFromBodyKey, LEASE_BODY_PREFIX, parseDueIndexKey, TOKEN_INDEX_PREFIX } from './lease-entry.js';
import type { TidyResult } from './types.js';
import { progressLine } from './progress.js';

export const BULK_CONCURRENCY = 16;

export interface TidyContext {
  store: Pick<KeyValueStore, 'get' | 'delete' | 'batch' | 'scan' | 'scanKeys'>;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  progressEveryMs: number;
  tokenExists(tokenKey: string): Promise<boolean>;
  /** Revokes a lease ignoring backend errors, under its lock; false (and the error) when even that failed. */
  forceRevoke(id: string): Promise<{ ok: true } | { ok: false; error: unknown }>;
  /** Under the lease's lock: writes the due-index key its body calls for and drops any other. */
  repairDueKeys(id: string): Promise<void>;
}

export async function forEachLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++]!;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

export async function tidyLeases(ctx: TidyContext): Promise<TidyResult> {
  const { store, logger } = ctx;
  const known = new Map<string, boolean>();
  const tokenValid = async (tk: string): Promise<boolean> => {
    if (tk === '') return false;
    let v = known.get(tk);
    if (v === undefined) {
      v = await ctx.tokenExists(tk);
      known.set(tk, v);
    }
    return v;
  };
  let scanned = 0;
  logger.info('tidy: started');
  const doomed: string[] = [];
  const scanning = progressLine(logger, 'tidy: scanning leases', ctx.progressEveryMs, () => ({ scanned, toRevoke: doomed.length }));
  for await (const { key, value } of store.scan(LEASE_BODY_PREFIX)) {
    scanned++;
    scanning();
    const entry = decodeEntry(value);
    if (!entry) {
      logger.warn('tidy: skipping a corrupt lease entry', { key });
      continue;
    }
    if (!(await tokenValid(entry.tokenKey))) doomed.push(entry.leaseId);
  }
  logger.info('tidy: scan done', { scanned, toRevoke: doomed.length });
  let revoked = 0;
  let done = 0;
  const revoking = progressLine(logger, 'tidy: revoking leases', ctx.progressEveryMs, () => ({ done, of: doomed.length, revoked }));
  await forEachLimit(doomed, BULK_CONCURRENCY, async (id) => {
    const outcome = await ctx.forceRevoke(id);
    if (outcome.ok) revoked++;
    else logger.error('tidy: could not remove a lease', { leaseId: id, error: (outcome.error as Error)?.message });
    done++;
    revoking();
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
  const dueKeysRepaired = await tidyDueIndex(ctx);
  logger.info('tidy finished', { scanned, revoked, indexEntriesRemoved: danglingKeys.length, dueKeysRepaired });
  return { scanned, revoked, indexEntriesRemoved: danglingKeys.length, dueKeysRepaired };
}

/** The pass over the due index; returns how many leases needed a repair. */
async function tidyDueIndex(ctx: TidyContext): Promise<number> {
  const { store } = ctx;
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
  await forEachLimit([...suspects], BULK_CONCURRENCY, (id) => ctx.repairDueKeys(id));
  return suspects.size;
}
