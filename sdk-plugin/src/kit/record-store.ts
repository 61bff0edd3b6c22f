/**
 * Typed records over a mount's storage: the one store every engine uses.
 *
 * A record kind is a key prefix and a zod schema (`store.kind('role/', Role)`);
 * its records live at `<prefix><name>` as JSON (or the kind's codec). Reads
 * are validated against the schema (defaults fill fields added since the
 * record was written), writes are validated before they reach storage.
 *
 * Cache: records are kept in one bounded read-through cache per store
 * (least recently used goes first). It is correct because a plugin process is
 * the only writer of its mount's storage: every write of this store drops
 * the key before and after it, and the core's `invalidate(key)` drops it when
 * storage changed elsewhere; a load that overlapped a write or drop is not
 * kept, so a stale value never sticks. Cached values are frozen: `get` hands
 * each reader its own copy to edit, `view` the shared frozen one (hot paths
 * that only read). Misses are not cached, so guessed names cost no memory.
 *
 * Lists are storage round trips unless a kind asks for `cacheList`: then its
 * top-level names are kept until a key under its prefix is written, dropped
 * or invalidated (the same rule as records). Values computed from a record
 * (a parsed key, a signer) are kept with `memo`, tied to the cached record
 * object, so a changed record is recomputed without any dropping by hand.
 *
 * Locks: `lock(name, fn)` serializes read-modify-write of one record inside
 * this process (one process serves a plugin's mounts and only the active
 * node writes, so that is enough); `update` is get + change + put under it.
 *
 * Batches: `putOp`/`deleteOp` build operations that `store.batch(ops)`
 * applies atomically through the core's barrier: a record and its index (or
 * a version and its metadata) are written together or not at all.
 */
import type { z } from 'zod';
import { StrongroomError } from '../errors.js';
import { paginate } from '../paginate.js';
import type { LogicalResponse } from '../logical.js';
import type { Storage, StorageOp } from '../storage.js';
import { createKeyedMutex, type KeyedMutex } from './keyed-mutex.js';
import { createReadCache } from './read-cache.js';

/** Bytes <-> the plain value the schema checks (default: UTF-8 JSON). */
export interface RecordCodec {
  encode(value: unknown): Uint8Array;
  decode(bytes: Uint8Array): unknown;
}

export interface RecordKindOptions<T> {
  /** Keep loaded records in the store's cache (default true; false for write-ahead entries and the like). */
  cache?: boolean;
  /** Whether one loaded record may be cached (approle: only SecretIDs without a use limit). */
  keep?: (value: T) => boolean;
  codec?: RecordCodec;
  /** Keep the kind's top-level name list too (a small set read on a hot path, as SSH issuers resolved by name). */
  cacheList?: boolean;
}

export interface ListOptions {
  /** A sub-folder below the kind's prefix ("" or ending in "/"). */
  dir?: string;
  /** Pagination as LIST requests carry it (`req.list`): start after this entry, at most `limit` entries (0: all). */
  after?: string;
  limit?: number;
}

/** The records of one kind. `name` is the part of the key after the kind's prefix. */
export interface Records<T> {
  readonly prefix: string;
  /** The storage key of a record. */
  key(name: string): string;
  /** The record, as the caller's own copy; null when absent. */
  get(name: string): Promise<T | null>;
  /** The record as the cache holds it (frozen, shared with other readers): for reads that change nothing. */
  view(name: string): Promise<Readonly<T> | null>;
  /** The cached record without loading it. */
  peek(name: string): Readonly<T> | undefined;
  /** Validates and stores the record; answers what was stored (schema defaults applied). */
  put(name: string, value: T): Promise<T>;
  delete(name: string): Promise<void>;
  /** Names one level below the prefix (sub-folders end in "/"), sorted, paginated when asked. */
  list(opts?: ListOptions): Promise<string[]>;
  /** Runs `fn` holding this record's lock. */
  lock<R>(name: string, fn: () => Promise<R>): Promise<R>;
  /**
   * Read-modify-write under the record's lock: `fn` gets a copy of the
   * current record (or null) and returns the new one, null to delete it, or
   * undefined to leave storage as it is. Answers the record as it now is.
   */
  update(name: string, fn: (current: T | null) => T | null | undefined | Promise<T | null | undefined>): Promise<T | null>;
  /** A validated put for `store.batch`. */
  putOp(name: string, value: T): StorageOp;
  deleteOp(name: string): StorageOp;
  /** The store's `batch` (operations of any kind of the same store). */
  batch(ops: StorageOp[]): Promise<void>;
  /**
   * `fn` memoized per record object: given the records `view` hands out, it
   * runs once per cached version of a record (the cache replaces the object
   * when the record changes, so the result never outlives it).
   */
  memo<D>(fn: (record: Readonly<T>) => D): (record: Readonly<T>) => D;
}

/** A kind with exactly one record (a mount's config, a key): the Records API without names. */
export interface SingleRecord<T> {
  readonly key: string;
  get(): Promise<T | null>;
  view(): Promise<Readonly<T> | null>;
  put(value: T): Promise<T>;
  delete(): Promise<void>;
  update(fn: (current: T | null) => T | null | undefined | Promise<T | null | undefined>): Promise<T | null>;
  /** Runs `fn` holding this record's lock (not reentrant: inside it use put and delete, not update). */
  lock<R>(fn: () => Promise<R>): Promise<R>;
  putOp(value: T): StorageOp;
  deleteOp(): StorageOp;
  memo<D>(fn: (record: Readonly<T>) => D): (record: Readonly<T>) => D;
}

export interface RecordStore {
  /** Declares a record kind under `prefix` ("role/"); the schema is the truth of what a record holds. */
  kind<S extends z.ZodType>(prefix: string, schema: S, opts?: RecordKindOptions<z.output<S>>): Records<z.output<S>>;
  /** Declares a record kind of one record at `key` ("config"). */
  single<S extends z.ZodType>(key: string, schema: S, opts?: RecordKindOptions<z.output<S>>): SingleRecord<z.output<S>>;
  /** Applies `ops` (from `putOp`/`deleteOp`, any kinds) atomically: all or none. */
  batch(ops: StorageOp[]): Promise<void>;
  /** Runs `fn` holding the lock of storage key `key` (what `Records.lock` uses). */
  lock<R>(key: string, fn: () => Promise<R>): Promise<R>;
  /** A storage key changed elsewhere: drop what is cached for it. Wire it to the backend's `invalidate`. */
  invalidate(key: string): void;
  /** Drops the whole cache (cleanup). */
  clear(): void;
  /**
   * Changes the cache bound (0: no bound), evicting the least recently used
   * beyond it (transit's cache-config). Recency is tracked only while bounded.
   */
  resize(max: number): void;
  /** Records cached (for tests and metrics). */
  cached(): number;
}

export interface RecordStoreOptions {
  /** Records cached at most, all kinds together (default 10 000; 0: no bound). */
  cacheMax?: number;
  /** Share a mutex with other code of the engine (default: the store's own). */
  mutex?: KeyedMutex;
}

const jsonCodec: RecordCodec = {
  encode: (v) => Buffer.from(JSON.stringify(v), 'utf8'),
  decode: (b) => JSON.parse(Buffer.from(b).toString('utf8')) as unknown,
};

/**
 * For records stored as raw bytes (a salt, a DER key): the record is
 * `{ bytes: <base64> }` in memory and the bytes alone in storage. Schema:
 * `z.object({ bytes: z.string() })`.
 */
export const rawBytesCodec: RecordCodec = {
  encode: (v) => Buffer.from((v as { bytes: string }).bytes, 'base64'),
  decode: (b) => ({ bytes: Buffer.from(b).toString('base64') }),
};

export function createRecordStore(storage: Storage, opts: RecordStoreOptions = {}): RecordStore {
  const cache = createReadCache<object>({ max: opts.cacheMax ?? 10_000 });
  const mutex = opts.mutex ?? createKeyedMutex();
  const lock = <R>(key: string, fn: () => Promise<R>) => mutex.run(key, fn);
  // Kinds whose name list is cached: told of every key written, dropped or invalidated.
  const listCaches: { prefix: string; drop(): void }[] = [];
  const touched = (keys: readonly string[]) => {
    for (const l of listCaches) if (keys.some((k) => k.startsWith(l.prefix))) l.drop();
  };
  const written = async <R>(keys: readonly string[], op: () => Promise<R>): Promise<R> => {
    touched(keys);
    try {
      return await cache.write(keys, op);
    } finally {
      touched(keys);
    }
  };
  const batch = async (ops: StorageOp[]) => {
    if (ops.length === 0) return;
    await written(
      ops.map((o) => o.key),
      () => storage.batch(ops),
    );
  };

  function kind<S extends z.ZodType>(prefix: string, schema: S, kopts: RecordKindOptions<z.output<S>> = {}): Records<z.output<S>> {
    type T = z.output<S>;
    const codec = kopts.codec ?? jsonCodec;
    const cached = kopts.cache !== false;
    const key = (name: string) => prefix + name;

    const check = (value: unknown, what: string): T => {
      const r = schema.safeParse(value);
      if (r.success) return r.data as T;
      // Field names only: a record may hold secrets, so its values never reach a message.
      const fields = [...new Set(r.error.issues.map((i) => i.path.join('.') || '(record)'))].join(', ');
      throw new StrongroomError('internal', `${what} record under "${prefix}" does not match its schema (${fields})`);
    };
    const load = async (k: string): Promise<T | null> => {
      const raw = await storage.get(k);
      return raw === null ? null : check(codec.decode(raw), 'stored');
    };
    // Records are objects in practice; a scalar record is boxed so the cache can freeze and hold it.
    const keep = kopts.keep ? (b: object) => kopts.keep!(unbox<T>(b)) : undefined;
    const view = (name: string): Promise<Readonly<T> | null> => {
      const k = key(name);
      if (!cached) return load(k);
      return cache.get(k, async () => box(await load(k)), keep).then((v) => (v === null ? null : unbox<T>(v)));
    };
    const putOp = (name: string, value: T): StorageOp => ({ type: 'put', key: key(name), value: codec.encode(check(value, 'a new')) });
    const deleteOp = (name: string): StorageOp => ({ type: 'delete', key: key(name) });
    const write = (op: StorageOp) => written([op.key], () => (op.type === 'put' ? storage.put(op.key, op.value) : storage.delete(op.key)));
    const listAll = kopts.cacheList ? cachedList(() => storage.list(prefix)) : () => storage.list(prefix);
    if (kopts.cacheList) listCaches.push({ prefix, drop: (listAll as CachedList).drop });
    const memos = new WeakMap<object, unknown>();

    const records: Records<T> = {
      prefix,
      key,
      view,
      async get(name) {
        const v = await view(name);
        return v === null ? null : (structuredClone(v) as T);
      },
      peek(name) {
        const b = cache.peek(key(name));
        return b === undefined ? undefined : unbox<T>(b);
      },
      async put(name, value) {
        const stored = check(value, 'a new');
        await write({ type: 'put', key: key(name), value: codec.encode(stored) });
        return stored;
      },
      delete: (name) => write(deleteOp(name)),
      async list(o = {}) {
        const names = o.dir ? await storage.list(prefix + o.dir) : await listAll();
        return o.after || o.limit ? paginate(names, o.after ?? '', o.limit ?? 0) : names;
      },
      lock: (name, fn) => lock(key(name), fn),
      update: (name, fn) =>
        lock(key(name), async () => {
          const current = await records.get(name);
          const next = await fn(current);
          if (next === undefined) return current;
          if (next === null) {
            if (current !== null) await records.delete(name);
            return null;
          }
          return records.put(name, next);
        }),
      putOp,
      deleteOp,
      batch: (ops) => batch(ops),
      memo: (fn) => (record) => {
        // Scalar records are boxed in the cache; only objects can key the memo.
        if (typeof record !== 'object' || record === null) return fn(record);
        if (memos.has(record)) return memos.get(record) as ReturnType<typeof fn>;
        const d = fn(record);
        memos.set(record, d);
        return d;
      },
    };
    return records;
  }

  return {
    kind,
    single(key, schema, kopts) {
      const r = kind(key, schema, kopts);
      return {
        key,
        get: () => r.get(''),
        view: () => r.view(''),
        put: (v) => r.put('', v),
        delete: () => r.delete(''),
        update: (fn) => r.update('', fn),
        lock: (fn) => r.lock('', fn),
        putOp: (v) => r.putOp('', v),
        deleteOp: () => r.deleteOp(''),
        memo: r.memo,
      };
    },
    batch,
    lock,
    invalidate(key) {
      cache.drop(key);
      touched([key]);
    },
    clear() {
      cache.clear();
      for (const l of listCaches) l.drop();
    },
    resize: (max) => cache.resize(max),
    cached: () => cache.size(),
  };
}

type CachedList = (() => Promise<string[]>) & { drop(): void };

/** A name list kept until dropped; a load that overlapped a drop is not kept (the read cache's rule). */
function cachedList(load: () => Promise<string[]>): CachedList {
  let names: readonly string[] | null = null;
  let epoch = 0;
  const get = async () => {
    if (names) return [...names];
    const seen = epoch;
    const loaded = await load();
    if (seen === epoch) names = Object.freeze([...loaded]);
    return loaded;
  };
  return Object.assign(get, {
    drop() {
      epoch++;
      names = null;
    },
  });
}

interface Box {
  v: unknown;
}
const box = (v: unknown): Box | null => (v === null ? null : { v });
const unbox = <T>(b: object): T => (b as Box).v as T;

/**
 * A read of one named record (a role, a set): every field but its name, which
 * the path already carries; none (the SDK answers 404) when it does not exist.
 */
export async function readRecord<T extends { name: string }>(records: Pick<Records<T>, 'get'>, name: string): Promise<LogicalResponse | null> {
  const record = await records.get(name);
  if (!record) return null;
  const { name: _name, ...data } = record;
  return { data };
}
