/**
 * A read-through cache of entries parsed from storage. A fill whose read raced a
 * change (a write on this node, or an invalidation from the active node's change
 * feed) is not kept: otherwise the value read before the change would be cached
 * after it and served until the next change. Changes here are rare (policies),
 * so any change during a read drops that read's fill.
 */
export function createReadThroughCache<V>() {
  const entries = new Map<string, V>();
  let changes = 0;
  return {
    /** The cached value, or `read()`'s, cached when `keep` allows and nothing changed meanwhile. */
    async load(key: string, read: () => Promise<V>, keep: (v: V) => boolean = () => true): Promise<V> {
      if (entries.has(key)) return entries.get(key)!;
      const before = changes;
      const value = await read();
      if (changes === before && keep(value)) entries.set(key, value);
      return value;
    },
    /** The key changed in storage: the next load reads it again. */
    forget(key: string): void {
      changes++;
      entries.delete(key);
    },
  };
}
