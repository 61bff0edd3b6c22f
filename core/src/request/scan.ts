/**
 * A SCAN's answer as its caller may see it. The engine answers every key below
 * the path (a page of them, by `after`/`limit`); the core then drops each key
 * whose own path the caller's policies grant neither `read` nor `list`, so a
 * subtree the token may not touch is absent, with nothing saying it was there.
 * A page thinned that way is filled from the engine's next pages (from the last
 * key it answered), so a caller paging with `after` and `limit` misses nothing
 * and learns nothing from a short page.
 */
import type { LogicalResponse } from '@strongroom/sdk-plugin/host';

export interface ScanFilter {
  /** The caller's `limit` (0: the engine answered every key at once). */
  limit: number;
  /** The engine's page after `after` (its last key): the same request with that `after`. */
  next(after: string): Promise<LogicalResponse | null>;
  /** Per key (relative to the scanned path): whether the caller may see it. */
  visible(keys: readonly string[]): Promise<boolean[]>;
}

export async function visibleScan(first: LogicalResponse | null, f: ScanFilter): Promise<LogicalResponse | null> {
  if (!first) return null;
  const shown: string[] = [];
  for (let resp: LogicalResponse | null = first; resp; ) {
    const keys = keysOf(resp);
    if (keys.length === 0) break;
    const ok = await f.visible(keys);
    keys.forEach((k, i) => ok[i] && shown.push(k));
    // The engine's page was its last (shorter than asked), or the caller's page is full.
    if (f.limit === 0 || keys.length < f.limit || shown.length >= f.limit) break;
    resp = await f.next(keys[keys.length - 1] as string);
  }
  const keys = f.limit > 0 ? shown.slice(0, f.limit) : shown;
  if (keys.length > 0) return { ...first, data: { ...(first.data ?? {}), keys } };
  return first.warnings?.length ? { warnings: first.warnings } : null;
}

function keysOf(resp: LogicalResponse): string[] {
  const keys = resp.data?.keys;
  return Array.isArray(keys) ? keys.filter((k): k is string => typeof k === 'string') : [];
}
