/**
 * A bounded read-through cache of stored entries: the one cache primitive of
 * the project, used by an engine's record store (approle logins, kv reads),
 * the core's barrier (decrypted values) and its token store (token entries).
 * Correct when its owner is the only writer of what it caches: every write
 * runs through `write`, which drops the key before and after the write, and
 * `drop(key)` / `clear()` say storage changed elsewhere (a plugin's
 * `invalidate`, a standby taking over).
 *
 * Invariant: a read that was in flight while its key was written or dropped
 * (or the cache cleared) never fills the cache, so a late answer from storage
 * (the value before a write or a revocation) never sticks. Each load holds a
 * ticket that a write or drop of its key marks stale.
 *
 * Values are frozen by default, so a caller cannot alter the cached copy (a
 * cache of buffers, which cannot be frozen, copies them in and out instead
 * through `copy`, and wipes them on eviction through `onEvict`). The copy out
 * is made in the same tick as the lookup: a wipe by a write that lands before
 * the caller resumes must not reach what the caller was handed. Misses are remembered apart, in a
 * small set of their own with the same rules (a write or drop forgets the key):
 * a write of a new key reads it twice (the existence check, then the handler
 * under its lock) and the second read needs no storage round trip, while a
 * stream of unknown keys (guessed RoleIDs, guessed tokens) only churns that set
 * and never evicts a cached value.
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
  /** Deep-freeze values as they are cached (default true; false for buffers, which the owner copies). */
  freeze?: boolean;
  /** Remember misses (default true; false when storage may gain a key without a write through this cache). */
  rememberMisses?: boolean;
  /** Called as a value leaves the cache (dropped, evicted, cleared): a cache of secrets wipes it here. */
  onEvict?: (value: T) => void;
  /** Copies a value into the cache and out to each caller (a cache of buffers that `onEvict` wipes). */
  copy?: (value: T) => T;
}

/** Misses remembered at most; the oldest goes first. */
const ABSENT_MAX = 1024;

export function createReadCache<T extends object>(opts: ReadCacheOptions<T>): ReadCache<T> {
  const entries = new Map<string, T>();
  const absent = new Set<string>();
  // Loads in flight per key: a write or drop of the key marks them stale, so their answer is not kept.
  const fills = new Map<string, Set<{ stale: boolean }>>();
  const freeze = opts.freeze !== false;
  const rememberMisses = opts.rememberMisses !== false;
  const evicted = opts.onEvict;
  const copy = opts.copy;
  let max = opts.max;

  const remove = (key: string) => {
    const old = entries.get(key);
    if (old === undefined) return;
    entries.delete(key);
    evicted?.(old);
  };

  const trim = () => {
    while (max > 0 && entries.size > max) {
      const oldest = entries.keys().next();
      if (oldest.done) return;
      remove(oldest.value);
    }
  };

  const drop = (key: string) => {
    remove(key);
    absent.delete(key);
    const waiting = fills.get(key);
    if (waiting) for (const t of waiting) t.stale = true;
  };

  const fill = async (key: string, load: () => Promise<T | null>, keepThis?: (value: T) => boolean): Promise<T | null> => {
    const ticket = { stale: false };
    let waiting = fills.get(key);
    if (!waiting) fills.set(key, (waiting = new Set()));
    waiting.add(ticket);
    let value: T | null;
    try {
      value = await load();
    } finally {
      waiting.delete(ticket);
      if (waiting.size === 0) fills.delete(key);
    }
    if (ticket.stale) return value;
    if (value === null) {
      if (rememberMisses) {
        absent.add(key);
        if (absent.size > ABSENT_MAX) absent.delete(absent.values().next().value as string);
      }
      return null;
    }
    const keep = keepThis ?? opts.keep;
    if (keep && !keep(value)) return value;
    if (copy) {
      // The loaded value goes to the caller; the cache keeps its own copy, which an eviction may wipe.
      remove(key);
      entries.set(key, copy(value));
      trim();
      return value;
    }
    const kept = freeze ? deepFreeze(value) : value;
    remove(key);
    entries.set(key, kept);
    trim();
    return kept;
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
      return Promise.resolve(copy ? copy(hit) : hit);
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
      if (evicted) for (const v of entries.values()) evicted(v);
      entries.clear();
      absent.clear();
      for (const set of fills.values()) for (const t of set) t.stale = true;
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
