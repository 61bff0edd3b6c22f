/**
 * The one pagination rule every LIST uses (spec: "Paginated lists accept
 * `after` (entry to start after; need not exist) and `limit` (0 means all)").
 */
export function paginate(keys: readonly string[], after = '', limit = 0): string[] {
  const sorted = [...keys].sort();
  let start = 0;
  if (after !== '') {
    // First entry strictly greater than `after`, so `after` need not exist.
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((sorted[mid] as string) <= after) lo = mid + 1;
      else hi = mid;
    }
    start = lo;
  }
  return limit > 0 ? sorted.slice(start, start + limit) : sorted.slice(start);
}
