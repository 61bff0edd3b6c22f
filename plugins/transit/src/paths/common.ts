/** Shared pieces of the transit paths: dependencies, key lookup, batch processing. */
import { badRequest, type LogicalResponse } from '@strongroom/sdk-plugin';
import { decodeBase64 } from '../crypto/ciphertext.js';
import type { TransitStore } from '../store.js';
import type { LoadedPolicy, PolicyRecord } from '../keys/policy.js';

export interface TransitDeps {
  store: TransitStore;
  /** Unix milliseconds (injectable for rotation tests). */
  now: () => number;
}

/** A key that must exist for a data operation (Vault answers 400 here, not 404). */
export async function requireKey(store: Pick<TransitStore, 'get'>, name: string): Promise<LoadedPolicy> {
  const p = await store.get(name);
  if (!p) throw badRequest('encryption key not found');
  return p;
}

/** A key's record to change (under its lock): the caller's own copy; 400 when the key does not exist. */
export async function requireKeyCopy(store: Pick<TransitStore, 'copy'>, name: string): Promise<PolicyRecord> {
  const r = await store.copy(name);
  if (!r) throw badRequest('encryption key not found');
  return r;
}

/** Optional base64 input of a batch item or body; `field` names it in errors. */
export function optB64(v: unknown, field: string): Buffer | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw badRequest(`${field} must be a base64 string`);
  return decodeBase64(v, field);
}

export function optInt(v: unknown, field: string): number {
  if (v === undefined || v === null || v === '') return 0;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) throw badRequest(`${field} must be a non-negative integer`);
  return n;
}

export type BatchItem = Record<string, unknown>;

/** Reads `batch_input` as a list of objects, or null when absent. */
export function batchInput(raw: unknown): BatchItem[] | null {
  if (raw === undefined || raw === null) return null;
  let v = raw;
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v);
    } catch {
      throw badRequest('batch_input must be a list of objects');
    }
  }
  if (!Array.isArray(v)) throw badRequest('batch_input must be a list of objects');
  if (v.length === 0) throw badRequest('missing batch input to process');
  for (const item of v) {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) throw badRequest('batch_input must be a list of objects');
  }
  return v as BatchItem[];
}

function message(e: unknown): string {
  if (e instanceof Error && e.name === 'StrongroomError') return e.message;
  return 'internal error';
}

/**
 * Runs `fn` on each item in one pass. Items fail independently; the status is
 * `partialCode` (default 400) when some fail and 400 when all fail, as the spec
 * says for encrypt batches.
 */
export function runBatch(
  items: BatchItem[],
  fn: (item: BatchItem) => Record<string, unknown>,
  partialCode = 400,
  failureStatus = true,
): LogicalResponse {
  const results: Record<string, unknown>[] = new Array(items.length);
  let failed = 0;
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as BatchItem;
    const ref = item.reference;
    try {
      const r = fn(item);
      results[i] = ref !== undefined ? { ...r, reference: ref } : r;
    } catch (e) {
      failed++;
      results[i] = ref !== undefined ? { error: message(e), reference: ref } : { error: message(e) };
    }
  }
  const res: LogicalResponse = { data: { batch_results: results } };
  if (failed > 0 && failureStatus) res.status = failed === items.length ? 400 : partialCode;
  return res;
}
