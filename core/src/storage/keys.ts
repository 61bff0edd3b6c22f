/**
 * Key ordering shared by every storage layer. LevelDB orders keys by their
 * UTF-8 bytes, which is code-point order; JavaScript's default string sort is
 * UTF-16 order and disagrees above U+FFFF. Every backend here sorts by code
 * point so `list` and `scan` give the same order whatever the backend.
 */
import { badRequest } from '@strongroom/sdk-plugin/host';
import type { Physical, ScanRange } from './physical.js';

/** The store shape shared by physical backends, views and the barrier. */
export type KeyValueStore = Pick<Physical, 'get' | 'put' | 'delete' | 'list' | 'scan' | 'scanKeys' | 'scanKeyPages' | 'batch'>;

// With the `u` flag a surrogate range only matches unpaired surrogates.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * Rejects keys that UTF-8 cannot represent: two different ill-formed keys
 * would both encode to U+FFFD and silently share one entry.
 */
export function assertValidKey(key: string): void {
  if (typeof key !== 'string' || LONE_SURROGATE.test(key)) {
    throw badRequest('invalid storage key: not well-formed unicode');
  }
}

/** Code-point (UTF-8 byte) order comparison. */
export function compareKeys(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca === cb) continue;
    // Surrogates (astral code points) sort after every BMP character in
    // code-point order, even after U+E000..U+FFFF.
    const sa = ca >= 0xd800 && ca <= 0xdfff;
    const sb = cb >= 0xd800 && cb <= 0xdfff;
    if (sa !== sb) return sa ? 1 : -1;
    return ca - cb;
  }
  return a.length - b.length;
}

/**
 * The smallest key greater than every key starting with `prefix`, or
 * undefined when there is none (empty prefix). Range [prefix, bound) holds
 * exactly the keys under prefix.
 */
export function prefixUpperBound(prefix: string): string | undefined {
  const cps = Array.from(prefix);
  while (cps.length > 0) {
    const last = cps.pop() as string;
    let cp = (last.codePointAt(0) as number) + 1;
    if (cp === 0xd800) cp = 0xe000; // surrogates are not scalar values: skip them
    if (cp <= 0x10ffff) return cps.join('') + String.fromCodePoint(cp);
  }
  return undefined;
}

/** First key past the sub-tree `folder/`: '0' is the character after '/'. */
export function pastFolder(folderWithSlash: string): string {
  return folderWithSlash.slice(0, -1) + '0';
}

/** A scan window as bounds: the exclusive lower key (null: from `prefix` on) and the count (0: all). */
export function scanWindow(prefix: string, range: ScanRange | undefined): { after: string | null; limit: number } {
  const after = range?.after ? prefix + range.after : null;
  const limit = range?.limit !== undefined && range.limit > 0 ? Math.floor(range.limit) : 0;
  return { after, limit };
}

/** Keys per page when a store has no pages of its own. */
const KEY_PAGE = 1024;

/** Every key below `prefix` in order, a page at a time: the store's own pages, else `scanKeys` grouped. */
export async function* keyPages(store: Pick<Physical, 'scanKeys' | 'scanKeyPages'>, prefix: string): AsyncIterable<readonly string[]> {
  if (store.scanKeyPages) {
    yield* store.scanKeyPages(prefix);
    return;
  }
  let page: string[] = [];
  for await (const key of store.scanKeys(prefix)) {
    page.push(key);
    if (page.length >= KEY_PAGE) {
      yield page;
      page = [];
    }
  }
  if (page.length > 0) yield page;
}
