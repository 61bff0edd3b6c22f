/**
 * ACL checks an engine declares for an operation that acts on other paths of
 * its mount than the one requested (kv's `move/:path` updates the source's
 * `metadata/` path, deletes its `data/` path and creates the destination's):
 * the core evaluates them in place of the check on the request's own path, so
 * the rule lives in one place (the pipeline's authorisation) and a policy
 * written for `data/` and `metadata/` paths governs the move too.
 *
 * What must stay true: the paths checked are the paths the engine acts on.
 * A `{name}` is a capture of the path's pattern (already normalised by the
 * HTTP layer) or a string field of the body, which must be a clean relative
 * path (no empty, "." or ".." segment), the same rule the engine applies;
 * a `when` field is read with the SDK's own boolean parser. The request is
 * routed as the SDK routes it: the first path whose pattern matches.
 */
import { badRequest, compilePattern, parseBool, type AclRequirement, type BackendDescription, type CompiledPattern, type PathOperation } from '@strongroom/sdk-plugin/host';

interface CompiledPath {
  pattern: CompiledPattern;
  authorize: Partial<Record<PathOperation, AclRequirement[]>> | undefined;
}

/** Per description (one per mount's backend): its patterns, compiled once; null when none declares checks. */
const compiled = new WeakMap<BackendDescription, CompiledPath[] | null>();

function pathsOf(desc: BackendDescription): CompiledPath[] | null {
  let paths = compiled.get(desc);
  if (paths === undefined) {
    paths = desc.paths.some((p) => p.authorize) ? desc.paths.map((p) => ({ pattern: compilePattern(p.pattern), authorize: p.authorize })) : null;
    compiled.set(desc, paths);
  }
  return paths;
}

/** The checks to make for this request (paths relative to the mount), or null: check the request's own path as usual. */
export function declaredChecks(desc: BackendDescription | undefined, relativePath: string, op: PathOperation, data: Record<string, unknown>): Array<{ path: string; capability: AclRequirement['capability'] }> | null {
  const paths = desc ? pathsOf(desc) : null;
  if (!paths) return null;
  for (const p of paths) {
    const captures = p.pattern.match(relativePath);
    if (!captures) continue;
    const reqs = p.authorize?.[op];
    if (!reqs || reqs.length === 0) return null;
    return reqs
      .filter((r) => r.when === undefined || isTrue(data[r.when], r.when))
      .map((r) => ({ path: r.path.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => valueOf(name, captures, data)), capability: r.capability }));
  }
  return null;
}

function valueOf(name: string, captures: Record<string, string>, data: Record<string, unknown>): string {
  if (Object.hasOwn(captures, name)) return captures[name] as string;
  const v = data[name];
  if (typeof v !== 'string' || v === '' || v.includes('\0') || v.split('/').some((s) => s === '' || s === '.' || s === '..')) {
    throw badRequest(`field "${name}": must be a path inside the mount without empty, "." or ".." segments (no leading or trailing "/")`);
  }
  return v;
}

function isTrue(v: unknown, name: string): boolean {
  if (v === undefined || v === null) return false;
  try {
    return parseBool(v);
  } catch {
    throw badRequest(`field "${name}": expected a boolean`);
  }
}
