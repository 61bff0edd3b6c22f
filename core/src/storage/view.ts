/**
 * A store scoped to a key prefix: each mount's `logical/<uuid>/` view and each
 * namespace's `namespaces/<uuid>/` tree. Keys given to and returned by the view
 * are relative to the prefix, so a holder of a view cannot name a key outside
 * it (keys are concatenated, and no path syntax such as `..` is interpreted).
 */
import type { PhysicalEntry, PhysicalOp } from './physical.js';
import type { KeyValueStore } from './keys.js';

export interface StorageView extends KeyValueStore {
  readonly prefix: string;
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
  };
}
