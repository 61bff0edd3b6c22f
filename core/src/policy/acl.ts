/**
 * ACL evaluation: the set of a token's policies compiled once into lookup
 * structures, then asked per request "may this operation run on this path".
 *
 * Invariants (DESIGN.md section 5, Vault's documented rules):
 * - an exact pattern beats every glob; among globs exactly one wins (first
 *   wildcard later, then no trailing `*`, then fewer `+`, then longer, then
 *   lexically larger); different patterns are never merged;
 * - the same pattern in several policies is merged, and `deny` wins over
 *   every other capability;
 * - no matching rule means denied; only the `root` policy allows everything.
 * A check is a map lookup, then a few prefix-map lookups (one per distinct
 * prefix length) for `*` globs and for `+` patterns (grouped by the literal
 * text before their first `+`), testing only the groups that can match.
 */
import { CAPABILITIES, ROOT_POLICY_NAME, type Capability, type ParameterValue, type PathRule, type Policy } from './policy.js';

export type AclOperation = 'create' | 'read' | 'update' | 'patch' | 'delete' | 'list' | 'scan' | 'sudo-check' | 'renew' | 'revoke' | 'rollback';

export interface AclCheckResult {
  allowed: boolean;
  /** The winning rule grants `sudo` (always true for root). Root-protected paths need this as well as `allowed`. */
  sudo: boolean;
  /** The pattern that decided, or null (no match, or root). */
  matchedPattern: string | null;
  /** Why it was refused, for logs (never shown to the caller beyond "permission denied"). */
  reason?: 'no_matching_rule' | 'denied' | 'missing_capability' | 'denied_parameter' | 'parameter_not_allowed' | 'missing_required_parameter';
  /** The offending parameter for parameter refusals. */
  parameter?: string;
  /** Seconds: the winning rule's bounds on the request's wrap TTL (`min_wrapping_ttl`, `max_wrapping_ttl`), merged across policies. */
  minWrappingTtl?: number;
  maxWrappingTtl?: number;
}

export interface Acl {
  readonly isRoot: boolean;
  readonly policyNames: readonly string[];
  /** Capabilities on a path as `sys/capabilities-self` reports them: `["root"]`, `["deny"]`, or the granted list. */
  capabilities(path: string): string[];
  check(op: AclOperation, path: string, data?: Record<string, unknown>): AclCheckResult;
  /**
   * Whether any rule grants something at or below `prefix` (a mount's path with
   * its trailing slash): what decides if sys/internal/ui/mounts shows a mount
   * to the caller, as in Vault. A deny on one rule does not hide what another grants.
   */
  anyAccessUnder(prefix: string): boolean;
}

const BIT: Record<Capability, number> = { deny: 1, create: 2, read: 4, update: 8, patch: 16, delete: 32, list: 64, sudo: 128, scan: 256 };

const OP_BIT: Record<Exclude<AclOperation, 'sudo-check'>, number> = {
  create: BIT.create,
  read: BIT.read,
  update: BIT.update,
  patch: BIT.patch,
  delete: BIT.delete,
  list: BIT.list,
  // A recursive listing needs its own capability: `list` grants no `scan` (OpenBao's rule).
  scan: BIT.scan,
  // Lease and rollback operations are authorised as updates, as in Vault.
  renew: BIT.update,
  revoke: BIT.update,
  rollback: BIT.update,
};

const PARAMETER_CHECKED_OPS = new Set<AclOperation>(['read', 'create', 'update', 'patch']);

interface CompiledRule {
  pattern: string;
  caps: number;
  allowed?: Map<string, ParameterValue[]>;
  denied?: Map<string, ParameterValue[]>;
  required?: string[];
  minWrappingTtl?: number;
  maxWrappingTtl?: number;
  /** Glob metadata (unused for exact rules). */
  prefix: boolean;
  firstWildcard: number;
  plusCount: number;
  /** For `+` patterns: segments of the pattern without its trailing `*`. */
  segments: string[];
}

function describePattern(pattern: string): Pick<CompiledRule, 'prefix' | 'firstWildcard' | 'plusCount' | 'segments'> {
  const prefix = pattern.endsWith('*');
  const body = prefix ? pattern.slice(0, -1) : pattern;
  const segments = body.split('/');
  let plusCount = 0;
  let firstWildcard = prefix ? pattern.length - 1 : Number.POSITIVE_INFINITY;
  let offset = 0;
  segments.forEach((seg, k) => {
    // A `+` as the partial last segment of a prefix glob is literal text ("a/+*" is refused at parse).
    const isPartialLast = prefix && k === segments.length - 1;
    if (seg === '+' && !isPartialLast) {
      plusCount++;
      firstWildcard = Math.min(firstWildcard, offset);
    }
    offset += seg.length + 1;
  });
  return { prefix, firstWildcard, plusCount, segments };
}

/** Positive when `a` has the higher priority (DESIGN.md section 5). */
export function compareGlobPriority(
  a: Pick<CompiledRule, 'pattern' | 'prefix' | 'firstWildcard' | 'plusCount'>,
  b: Pick<CompiledRule, 'pattern' | 'prefix' | 'firstWildcard' | 'plusCount'>,
): number {
  if (a.firstWildcard !== b.firstWildcard) return a.firstWildcard - b.firstWildcard;
  if (a.prefix !== b.prefix) return a.prefix ? -1 : 1;
  if (a.plusCount !== b.plusCount) return b.plusCount - a.plusCount;
  if (a.pattern.length !== b.pattern.length) return a.pattern.length - b.pattern.length;
  return a.pattern < b.pattern ? -1 : a.pattern > b.pattern ? 1 : 0;
}

function matchesSegments(rule: CompiledRule, path: string): boolean {
  const segs = rule.segments;
  let start = 0;
  for (let k = 0; k < segs.length; k++) {
    const seg = segs[k] as string;
    if (k === segs.length - 1) {
      if (rule.prefix) return path.startsWith(seg, start);
      if (path.indexOf('/', start) !== -1) return false;
      return seg === '+' || (path.length - start === seg.length && path.startsWith(seg, start));
    }
    const end = path.indexOf('/', start);
    if (end === -1) return false;
    if (seg !== '+' && !(end - start === seg.length && path.startsWith(seg, start))) return false;
    start = end + 1;
  }
  return false;
}

function mergeParameterMaps(into: Map<string, ParameterValue[]> | undefined, from: Record<string, ParameterValue[]> | undefined) {
  if (!from) return into;
  const out = into ?? new Map<string, ParameterValue[]>();
  for (const [key, values] of Object.entries(from)) {
    const existing = out.get(key);
    // An empty list means "any value"; merged with anything it stays "any value".
    if (existing === undefined) out.set(key, [...values]);
    else if (existing.length === 0 || values.length === 0) out.set(key, []);
    else out.set(key, [...existing, ...values]);
  }
  return out;
}

function mergeRule(into: CompiledRule | undefined, rule: PathRule): CompiledRule {
  const r: CompiledRule = into ?? { pattern: rule.path, caps: 0, ...describePattern(rule.path) };
  for (const c of rule.capabilities) r.caps |= BIT[c];
  if (r.caps & BIT.deny) r.caps = BIT.deny;
  const allowed = mergeParameterMaps(r.allowed, rule.allowedParameters);
  const denied = mergeParameterMaps(r.denied, rule.deniedParameters);
  if (allowed) r.allowed = allowed;
  if (denied) r.denied = denied;
  if (rule.requiredParameters) r.required = [...new Set([...(r.required ?? []), ...rule.requiredParameters])];
  // Wrapping bounds merge as Vault's ACL merges them, preferring short lifetimes: the
  // smaller of the maximums and the smaller of the minimums (0 sets neither). A merged
  // maximum below the merged minimum allows no wrap TTL at all (the pipeline refuses it).
  if (rule.minWrappingTtl !== undefined && rule.minWrappingTtl > 0) r.minWrappingTtl = Math.min(r.minWrappingTtl ?? Infinity, rule.minWrappingTtl);
  if (rule.maxWrappingTtl !== undefined && rule.maxWrappingTtl > 0) r.maxWrappingTtl = Math.min(r.maxWrappingTtl ?? Infinity, rule.maxWrappingTtl);
  return r;
}

/** Vault's glob for parameter values: `*` at the start and/or end of an allowed value. */
function globMatch(pattern: string, value: string): boolean {
  if (pattern === '*') return true;
  const starts = pattern.startsWith('*');
  const ends = pattern.endsWith('*');
  if (starts && ends) return value.includes(pattern.slice(1, -1));
  if (starts) return value.endsWith(pattern.slice(1));
  if (ends) return value.startsWith(pattern.slice(0, -1));
  return pattern === value;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

function valueInList(value: unknown, list: ParameterValue[]): boolean {
  if (list.length === 0) return true;
  // A list-valued parameter passes only if every element does.
  if (Array.isArray(value)) return value.every((v) => valueInList(v, list));
  return list.some((item) => (typeof item === 'string' && typeof value === 'string' ? globMatch(item, value) : deepEqual(item, value)));
}

function checkParameters(rule: CompiledRule, data: Record<string, unknown>): Pick<AclCheckResult, 'reason' | 'parameter'> | null {
  const keys = Object.keys(data);
  const lowered = keys.map((k) => k.toLowerCase());
  if (rule.required) {
    for (const req of rule.required) if (!lowered.includes(req)) return { reason: 'missing_required_parameter', parameter: req };
  }
  if (rule.denied && rule.denied.size) {
    const any = rule.denied.get('*');
    for (let i = 0; i < keys.length; i++) {
      const key = lowered[i] as string;
      const value = data[keys[i] as string];
      if (any && valueInList(value, any)) return { reason: 'denied_parameter', parameter: key };
      const list = rule.denied.get(key);
      if (list && valueInList(value, list)) return { reason: 'denied_parameter', parameter: key };
    }
  }
  if (rule.allowed && rule.allowed.size) {
    const any = rule.allowed.get('*');
    for (let i = 0; i < keys.length; i++) {
      const key = lowered[i] as string;
      const value = data[keys[i] as string];
      const list = rule.allowed.get(key) ?? any;
      if (!list || !valueInList(value, list)) return { reason: 'parameter_not_allowed', parameter: key };
    }
  }
  return null;
}

function capabilityNames(caps: number): Capability[] {
  return CAPABILITIES.filter((c) => caps & BIT[c]);
}

/** Compile the policies attached to a token. Include `ROOT_POLICY` (by name `root`) for a root token. */
export function createAcl(policies: readonly Policy[]): Acl {
  const policyNames = policies.map((p) => p.name);
  const isRoot = policyNames.includes(ROOT_POLICY_NAME);

  const byPattern = new Map<string, CompiledRule>();
  for (const policy of policies) {
    for (const rule of policy.rules) byPattern.set(rule.path, mergeRule(byPattern.get(rule.path), rule));
  }
  const exact = new Map<string, CompiledRule>();
  const prefixes = new Map<string, CompiledRule>();
  // `+` rules grouped by the literal text before their first `+`: only groups whose text starts the path can match.
  const segmentGroups = new Map<string, CompiledRule[]>();
  for (const rule of byPattern.values()) {
    if (rule.plusCount > 0) {
      const literal = rule.pattern.slice(0, rule.firstWildcard);
      const group = segmentGroups.get(literal);
      if (group) group.push(rule);
      else segmentGroups.set(literal, [rule]);
    } else if (rule.prefix) prefixes.set(rule.pattern.slice(0, -1), rule);
    else exact.set(rule.pattern, rule);
  }
  // Highest priority first, so the first match in a group is that group's best.
  for (const group of segmentGroups.values()) group.sort((a, b) => compareGlobPriority(b, a));
  const descendingLengths = (keys: Iterable<string>) => [...new Set([...keys].map((k) => k.length))].sort((a, b) => b - a);
  const prefixLengths = descendingLengths(prefixes.keys());
  const segmentLengths = descendingLengths(segmentGroups.keys());

  const findRule = (path: string, op: AclOperation | null): CompiledRule | undefined => {
    const hit = exact.get(path);
    if (hit) return hit;
    // A list (or scan) of "a/b/" is also governed by an exact rule on "a/b" (Vault's behaviour).
    if ((op === 'list' || op === 'scan') && path.endsWith('/')) {
      const trimmed = exact.get(path.slice(0, -1));
      if (trimmed) return trimmed;
    }
    let best: CompiledRule | undefined;
    for (const len of prefixLengths) {
      if (len > path.length) continue;
      const rule = prefixes.get(path.slice(0, len));
      if (rule) {
        best = rule;
        break;
      }
    }
    for (const len of segmentLengths) {
      if (len > path.length) continue;
      const group = segmentGroups.get(path.slice(0, len));
      if (!group) continue;
      for (const rule of group) {
        if (best && compareGlobPriority(rule, best) <= 0) break;
        if (matchesSegments(rule, path)) {
          best = rule;
          break;
        }
      }
    }
    return best;
  };

  const normalize = (path: string) => (path.startsWith('/') ? path.slice(1) : path);

  const grants = (rule: CompiledRule) => rule.caps !== 0 && (rule.caps & BIT.deny) === 0;
  /** Whether a `+` rule can match some path at or below `prefix`. */
  const reachesBelow = (rule: CompiledRule, prefix: string): boolean => {
    const want = prefix.replace(/\/$/, '').split('/');
    const segs = rule.segments;
    for (let k = 0; k < want.length; k++) {
      if (k >= segs.length) return false;
      const seg = segs[k] as string;
      const last = k === segs.length - 1;
      if (last && rule.prefix) return (want[k] as string).startsWith(seg) || seg.startsWith(want[k] as string);
      if (seg !== '+' && seg !== want[k]) return false;
    }
    return true;
  };

  return {
    isRoot,
    policyNames,
    capabilities(path) {
      if (isRoot) return ['root'];
      const rule = findRule(normalize(path), null);
      if (!rule || rule.caps === 0 || rule.caps & BIT.deny) return ['deny'];
      return capabilityNames(rule.caps);
    },
    anyAccessUnder(rawPrefix) {
      if (isRoot) return true;
      const prefix = normalize(rawPrefix);
      const own = findRule(prefix, null);
      if (own && grants(own)) return true;
      for (const rule of byPattern.values()) {
        if (!grants(rule)) continue;
        if (rule.plusCount > 0 ? reachesBelow(rule, prefix) : rule.pattern.startsWith(prefix)) return true;
      }
      return false;
    },
    check(op, rawPath, data) {
      if (isRoot) return { allowed: true, sudo: true, matchedPattern: null };
      const rule = findRule(normalize(rawPath), op);
      if (!rule) return { allowed: false, sudo: false, matchedPattern: null, reason: 'no_matching_rule' };
      const result: AclCheckResult = { allowed: false, sudo: (rule.caps & BIT.sudo) !== 0, matchedPattern: rule.pattern };
      if (rule.minWrappingTtl !== undefined) result.minWrappingTtl = rule.minWrappingTtl;
      if (rule.maxWrappingTtl !== undefined) result.maxWrappingTtl = rule.maxWrappingTtl;
      if (rule.caps & BIT.deny) {
        result.reason = 'denied';
        return result;
      }
      const needed = op === 'sudo-check' ? BIT.sudo : OP_BIT[op];
      if (!(rule.caps & needed)) {
        result.reason = 'missing_capability';
        return result;
      }
      if (data && PARAMETER_CHECKED_OPS.has(op)) {
        const refusal = checkParameters(rule, data);
        if (refusal) return Object.assign(result, refusal);
      }
      result.allowed = true;
      return result;
    },
  };
}
