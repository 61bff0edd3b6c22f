/** Policy-list rules of the token store (Vault's documented semantics). */

/**
 * Lower-cases, trims, drops empties, dedupes and sorts. `root` swallows every
 * other policy. `default` is added when asked, unless the list is `root`.
 */
export function sanitizePolicies(policies: readonly string[], addDefault: boolean): string[] {
  const set = new Set<string>();
  for (const p of policies) {
    const name = p.trim().toLowerCase();
    if (name === '') continue;
    if (name === 'root') return ['root'];
    set.add(name);
  }
  if (addDefault) set.add('default');
  return [...set].sort();
}

export function isSubset(superset: readonly string[], subset: readonly string[]): boolean {
  const s = new Set(superset);
  return subset.every((p) => s.has(p));
}

/** Glob with `*` wildcards anywhere (allowed_policies_glob); no other metacharacters. */
function globMatch(pattern: string, value: string): boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === value;
  const first = parts[0] ?? '';
  const last = parts[parts.length - 1] ?? '';
  if (!value.startsWith(first) || value.length < first.length + last.length || !value.endsWith(last)) return false;
  let pos = first.length;
  const end = value.length - last.length;
  for (const mid of parts.slice(1, -1)) {
    const at = value.indexOf(mid, pos);
    if (at === -1 || at + mid.length > end) return false;
    pos = at + mid.length;
  }
  return true;
}

export const matchesAnyGlob = (patterns: readonly string[], value: string): boolean =>
  patterns.some((g) => globMatch(g, value));
