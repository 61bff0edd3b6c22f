/**
 * Per-key mutual exclusion inside one plugin process, for read-modify-write
 * sequences over storage (kv check-and-set, transit rotation). One process
 * serves every mount of a plugin and only the active node forwards writes to
 * it, so an in-process lock is enough. Keys should include the mount uuid.
 */
export interface KeyedMutex {
  run<T>(key: string, fn: () => Promise<T>): Promise<T>;
}

export interface KeyedMutexWithSize extends KeyedMutex {
  /** Keys held or waited for right now (0: idle). */
  size(): number;
}

export function createKeyedMutex(): KeyedMutexWithSize {
  const tails = new Map<string, Promise<void>>();
  return {
    size: () => tails.size,
    async run(key, fn) {
      const prev = tails.get(key) ?? Promise.resolve();
      let release!: () => void;
      const mine = new Promise<void>((r) => (release = r));
      const tail = prev.then(() => mine);
      tails.set(key, tail);
      await prev;
      try {
        return await fn();
      } finally {
        release();
        // Drop the entry once nobody queued behind us, so the map does not grow with every key ever touched.
        if (tails.get(key) === tail) tails.delete(key);
      }
    },
  };
}
