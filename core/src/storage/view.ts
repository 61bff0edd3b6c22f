/**
 * A store scoped to a key prefix: each mount's `logical/<uuid>/` view and each
 * namespace's `namespaces/<uuid>/` tree. Keys given to and returned by the view
 * are relative to the prefix, so a holder of a view cannot name a key outside
 * it (keys are concatenated, and no path syntax such as `..` is interpreted).
 */
import { MAX_RECURSIVE_PAGE } from '@strongroom/sdk-plugin/host';
import type { PhysicalEntry, PhysicalOp, ScanRange } from './physical.js';
import type { KeyValueStore } from './keys.js';

export interface StorageView extends KeyValueStore {
  readonly prefix: string;
  /** The engine kit's recursive listing (sdk-plugin Storage.listRecursive): one ranged key scan. */
  listRecursive(sub: string, page?: ScanRange): Promise<string[]>;
}

/** Keys below `prefix`, relative to it, sorted, after `page.after`, at most `page.limit` (capped). */
async function listRecursive(store: KeyValueStore, prefix: string, page: ScanRange = {}): Promise<string[]> {
  const limit = Math.min(page.limit && page.limit > 0 ? page.limit : MAX_RECURSIVE_PAGE, MAX_RECURSIVE_PAGE);
  const out: string[] = [];
  for await (const key of store.scanKeys(prefix, { after: page.after ?? '', limit })) out.push(key.slice(prefix.length));
  return out;
}

export function createView(store: KeyValueStore, prefix: string): StorageView {
  const strip = prefix.length;
  return {
    prefix,
    get: (key) => store.get(prefix + key),
    put: (key, value) => store.put(prefix + key, value),
    delete: (key) => store.delete(prefix + key),
    list: (sub) => store.list(prefix + sub),
    batch: (ops: PhysicalOp[]) =>
      store.batch(
        ops.map((op): PhysicalOp =>
          op.type === 'put' ? { type: 'put', key: prefix + op.key, value: op.value } : { type: 'delete', key: prefix + op.key },
        ),
      ),
    async *scan(sub): AsyncIterable<PhysicalEntry> {
      for await (const e of store.scan(prefix + sub)) yield { key: e.key.slice(strip), value: e.value };
    },
    async *scanKeys(sub, range): AsyncIterable<string> {
      for await (const key of store.scanKeys(prefix + sub, range)) yield key.slice(strip);
    },
    listRecursive: (sub, page) => listRecursive(store, prefix + sub, page),
  };
}

export interface ClosableView extends StorageView {
  /**
   * Refuses every later call, then resolves once the writes already under way
   * have landed: after it, nothing more can appear under the prefix through
   * this view, so deleting the prefix leaves it empty for good.
   */
  close(): Promise<void>;
}

/**
 * A mount's storage: the one view its backend (and plugin callbacks) write
 * through, closed when the mount is disabled. A write that arrived after the
 * disable's cleanup (a late request, a plugin's background task) left data
 * under a removed mount's prefix for good.
 */
export function createClosableView(store: KeyValueStore, prefix: string, gone: () => Error): ClosableView {
  const inner = createView(store, prefix);
  let closed = false;
  let writing = 0;
  let settled: (() => void) | null = null;
  const write = async <T>(op: () => Promise<T>): Promise<T> => {
    if (closed) throw gone();
    writing++;
    try {
      return await op();
    } finally {
      if (--writing === 0 && settled) settled();
    }
  };
  const open = () => {
    if (closed) throw gone();
  };
  return {
    prefix,
    get: async (key) => (open(), inner.get(key)),
    list: async (sub) => (open(), inner.list(sub)),
    put: (key, value) => write(() => inner.put(key, value)),
    delete: (key) => write(() => inner.delete(key)),
    batch: (ops) => write(() => inner.batch(ops)),
    async *scan(sub) {
      open();
      yield* inner.scan(sub);
    },
    async *scanKeys(sub, range) {
      open();
      yield* inner.scanKeys(sub, range);
    },
    listRecursive: async (sub, page) => (open(), inner.listRecursive(sub, page)),
    close() {
      closed = true;
      if (writing === 0) return Promise.resolve();
      return new Promise<void>((resolve) => (settled = resolve));
    },
  };
}
