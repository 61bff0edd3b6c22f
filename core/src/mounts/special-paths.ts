/**
 * Matchers for a backend's special paths (unauthenticated and root/sudo).
 * Patterns use Vault's policy-style globs: a trailing `*` is a prefix match
 * and a `+` segment matches exactly one path segment.
 */
export type PathMatcher = (relativePath: string) => boolean;

export function compileSpecialPaths(patterns: string[]): PathMatcher {
  if (patterns.length === 0) return () => false;
  const exact = new Set<string>();
  const prefixes: string[] = [];
  const globs: Array<{ segs: string[]; prefix: boolean }> = [];
  for (const p of patterns) {
    const prefix = p.endsWith('*');
    const body = prefix ? p.slice(0, -1) : p;
    if (body.split('/').includes('+')) globs.push({ segs: body.split('/'), prefix });
    else if (prefix) prefixes.push(body);
    else exact.add(body);
  }
  return (path) => {
    if (exact.has(path)) return true;
    for (const pre of prefixes) if (path.startsWith(pre)) return true;
    if (globs.length === 0) return false;
    const segs = path.split('/');
    return globs.some((g) => matchGlob(g.segs, g.prefix, segs));
  };
}

function matchGlob(pattern: string[], prefix: boolean, segs: string[]): boolean {
  if (!prefix && pattern.length !== segs.length) return false;
  if (segs.length < pattern.length) return false;
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    const s = segs[i]!;
    if (p === '+') continue;
    if (prefix && i === pattern.length - 1) return s.startsWith(p);
    if (p !== s) return false;
  }
  return true;
}
