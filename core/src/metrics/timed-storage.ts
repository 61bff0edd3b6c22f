/** Storage and barrier operations timed into their latency histograms. */
import type { Physical } from '../storage/physical.js';
import { timed, type Metrics } from './metrics.js';

/** Physical storage with each operation timed into strongroom_storage_duration_seconds. */
export function timedPhysical(p: Physical, metrics: Metrics): Physical {
  const h = metrics.storageDuration;
  return {
    get: (key) => timed(h, { op: 'get' }, () => p.get(key)),
    put: (key, value) => timed(h, { op: 'put' }, () => p.put(key, value)),
    delete: (key) => timed(h, { op: 'delete' }, () => p.delete(key)),
    list: (prefix) => timed(h, { op: 'list' }, () => p.list(prefix)),
    batch: (ops) => timed(h, { op: 'batch' }, () => p.batch(ops)),
    scan: (prefix) => p.scan(prefix),
    // A ranged key scan is one bounded page (a SCAN's read), timed as op "scan_range"; an
    // open-ended scan is a stream its reader paces, so it is not timed.
    scanKeys: (prefix, range) => (range ? timedIterable(h, { op: 'scan_range' }, p.scanKeys(prefix, range)) : p.scanKeys(prefix)),
    ...(p.scanKeyPages ? { scanKeyPages: (prefix: string) => p.scanKeyPages!(prefix) } : {}),
    close: () => p.close(),
    ...(p.snapshots ? { snapshots: p.snapshots } : {}),
  };
}

async function* timedIterable<T>(h: Metrics['storageDuration'], labels: Record<string, string>, items: AsyncIterable<T>): AsyncIterable<T> {
  const end = h.startTimer(labels);
  try {
    yield* items;
  } finally {
    end();
  }
}

/** The barrier with get/put/delete/list timed into strongroom_barrier_duration_seconds and Vault's barrier.* summaries; everything else as is. */
export function timedBarrier<B extends { get(k: string): Promise<unknown>; put(k: string, v: Uint8Array): Promise<void>; delete(k: string): Promise<void>; list(p: string): Promise<string[]> }>(b: B, metrics: Metrics): B {
  const h = metrics.barrierDuration;
  const v = metrics.vault.barrier;
  /** Into our histogram (seconds, labelled) and Vault's summary for the operation (milliseconds). */
  const both = <T>(op: keyof typeof v, fn: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    return timed(h, { op }, fn).finally(() => v[op].observe(performance.now() - started));
  };
  // Object.create keeps the barrier's getters (`sealed`) live; only the four data operations are wrapped.
  const wrapped = Object.create(b) as B;
  Object.assign(wrapped, {
    get: (k: string) => both('get', () => b.get(k)),
    put: (k: string, val: Uint8Array) => both('put', () => b.put(k, val)),
    delete: (k: string) => both('delete', () => b.delete(k)),
    list: (p: string) => both('list', () => b.list(p)),
  });
  return wrapped;
}
