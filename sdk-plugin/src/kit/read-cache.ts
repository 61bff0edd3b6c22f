/**
 * A bounded read-through cache of stored entries, for an engine's hot reads
 * (approle logins, kv reads). Correct because a plugin process is the only
 * writer of its mount's storage:
 * every write runs through `write`, which drops the key before and after the
 * write, and the core's `invalidate(key)` drops it when storage changed
 * elsewhere. A read that was in flight while any write or drop happened does
 * not fill the cache, so a stale value never sticks. Values are frozen, so a
 * caller cannot alter the cached copy. Misses are remembered apart, in a small
 * set of their own with the same rules (a write or drop forgets the key): a
 * write of a new key reads it twice (the existence check, then the handler
 * under its lock) and the second read needs no storage round trip, while a
 * stream of unknown keys (guessed RoleIDs) only churns that set and never
 * evicts a cached value.
 */
export interface ReadCache<T> {
  /** The cached value, else `load()`'s, kept when not null and `keep` (this call's, else the cache's) allows it. */
  get(key: string, load: () => Promise<T | null>, keep?: (value: T) => boolean): Promise<T | null>;
  /** The cached value without loading it (does not count as a use for eviction). */
  peek(key: string): T | undefined;
  /** Runs a write of `key` (or of several keys at once); they are uncached before, during and after it. */
  write<R>(key: string | readonly string[], op: () => Promise<R>): Promise<R>;
  drop(key: string): void;
  clear(): void;
  size(): number;
  /** Changes the bound (0: none), evicting the least recently used beyond it. */
  resize(max: number): void;
}

export interface ReadCacheOptions<T> {
  /** Entries kept at most (0: no bound); the least recently used goes first. */
  max: number;
  /** Whether a loaded value may be cached (default: always). */
  keep?: (value: T) => boolean;
}

/** Misses remembered at most; the oldest goes first. */
const ABSENT_MAX = 1024;

export function createReadCache<T extends object>(opts: ReadCacheOptions<T>): ReadCache<T> {
  const entries = new Map<string, T>();
  const absent = new Set<string>();
  // Bumped by every write and drop: a load that saw another epoch may have read a value since replaced.
  let epoch = 0;
  let max = opts.max;
  const trim = () => {
    while (max > 0 && entries.size > max) {
      const oldest = entries.keys().next();
      if (oldest.done) return;
      entries.delete(oldest.value);
    }
  };

  const drop = (key: string) => {
    epoch++;
    entries.delete(key);
    absent.delete(key);
  };

  const fill = async (key: string, load: () => Promise<T | null>, keepThis?: (value: T) => boolean): Promise<T | null> => {
    const seen = epoch;
    const value = await load();
    if (seen !== epoch) return value;
    if (value === null) {
      absent.add(key);
      if (absent.size > ABSENT_MAX) absent.delete(absent.values().next().value as string);
      return null;
    }
    const keep = keepThis ?? opts.keep;
    if (keep && !keep(value)) return value;
    const frozen = deepFreeze(value);
    entries.set(key, frozen);
    trim();
    return frozen;
  };

  return {
    // Not async: a hit resolves without extra ticks (transit encrypt, kv and approle reads are hot paths).
    get(key, load, keepThis) {
      const hit = entries.get(key);
      if (hit === undefined) return absent.has(key) ? Promise.resolve(null) : fill(key, load, keepThis);
      // Recency only matters with a bound; moving the entry costs more than the rest of a hit.
      if (max > 0) {
        entries.delete(key);
        entries.set(key, hit);
      }
      return Promise.resolve(hit);
    },
    peek: (key) => entries.get(key),
    async write(key, op) {
      const keys = typeof key === 'string' ? [key] : key;
      for (const k of keys) drop(k);
      try {
        return await op();
      } finally {
        for (const k of keys) drop(k);
      }
    },
    drop,
    clear() {
      epoch++;
      entries.clear();
      absent.clear();
    },
    size: () => entries.size,
    resize(n) {
      max = n;
      trim();
    },
  };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
