/** One write of an atomic batch. */
export type StorageOp = { type: 'put'; key: string; value: Uint8Array } | { type: 'delete'; key: string };

/** A page of a recursive listing: keys strictly after `after` (relative to the prefix), at most `limit` (0: the cap). */
export interface ListPage {
  after?: string;
  limit?: number;
}

/** Keys one `listRecursive` call answers at most: a larger `limit` is cut to this (page on with `after`). */
export const MAX_RECURSIVE_PAGE = 1000;

/** Operations one batch may carry at most (the core refuses more). */
export const MAX_BATCH_OPS = 1000;

/**
 * The storage an engine sees: its own mount's view, encrypted by the core's
 * barrier. Keys are plain text (never put a secret in a key); values are bytes.
 */
export interface Storage {
  get(key: string): Promise<Uint8Array | null>;
  put(key: string, value: Uint8Array): Promise<void>;
  delete(key: string): Promise<void>;
  /** One level below `prefix`, `/`-delimited: "a/b" and "a/c/d" under "a/" give ["b", "c/"]. Sorted. */
  list(prefix: string): Promise<string[]>;
  /**
   * Every key below `prefix` at any depth, relative to it ("a/b" and "a/c/d" under "a/" give
   * ["b", "c/d"]), sorted (code-point order), from just past `page.after`, at most `page.limit`
   * (capped at MAX_RECURSIVE_PAGE): one ordered range read of the store, one call to the core,
   * never a crawl of `list` calls. Page on with the last key answered as `after`.
   */
  listRecursive(prefix: string, page?: ListPage): Promise<string[]>;
  /**
   * All of `ops` or none, in order (the core applies them through the
   * barrier's batch): a record and its index written together can never be
   * seen, nor survive a crash, half-written.
   */
  batch(ops: StorageOp[]): Promise<void>;
}

/** JSON helpers over a Storage, so engines never hand-roll encoding. */
export async function getJSON<T>(s: Storage, key: string): Promise<T | null> {
  const v = await s.get(key);
  return v === null ? null : (JSON.parse(Buffer.from(v).toString('utf8')) as T);
}

export async function putJSON(s: Storage, key: string, value: unknown): Promise<void> {
  await s.put(key, Buffer.from(JSON.stringify(value), 'utf8'));
}

/** In-memory Storage for tests and the in-process harness. */
export function createMemoryStorage(): Storage & { dump(): Map<string, Uint8Array> } {
  const m = new Map<string, Uint8Array>();
  return {
    async get(key) {
      const v = m.get(key);
      return v === undefined ? null : Uint8Array.from(v);
    },
    async put(key, value) {
      m.set(key, Uint8Array.from(value));
    },
    async delete(key) {
      m.delete(key);
    },
    async list(prefix) {
      return listOneLevel(m.keys(), prefix);
    },
    async listRecursive(prefix, page = {}) {
      const limit = Math.min(page.limit && page.limit > 0 ? page.limit : MAX_RECURSIVE_PAGE, MAX_RECURSIVE_PAGE);
      const after = page.after ?? '';
      const keys = [...m.keys()].filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length));
      return keys.filter((k) => k !== '' && (after === '' || compareCodePoints(k, after) > 0)).sort(compareCodePoints).slice(0, limit);
    },
    async batch(ops) {
      for (const op of ops) {
        if (op.type === 'put') m.set(op.key, Uint8Array.from(op.value));
        else m.delete(op.key);
      }
    },
    dump: () => m,
  };
}

/** One level of `keys` below `prefix` (shared by every Storage/Physical implementation). */
export function listOneLevel(keys: Iterable<string>, prefix: string): string[] {
  const out = new Set<string>();
  for (const k of keys) {
    if (!k.startsWith(prefix)) continue;
    const rest = k.slice(prefix.length);
    const i = rest.indexOf('/');
    out.add(i === -1 ? rest : rest.slice(0, i + 1));
  }
  return [...out].filter((k) => k !== '').sort();
}

/** Code-point (UTF-8 byte) order, the order of every store's keys (JavaScript's sort is UTF-16 order). */
function compareCodePoints(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
