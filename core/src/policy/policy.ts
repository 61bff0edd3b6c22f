/**
 * ACL policy documents (Vault syntax, HCL or JSON) parsed into typed rules.
 *
 * Invariants guarded here: `root` is never parsed from text (it is built in and
 * grants everything, so writing it must be impossible); `default` may be
 * rewritten but not deleted; names are lower-cased so `Ops` and `ops` are one
 * policy; a glob `*` is only a suffix and `+` only a whole segment, so a
 * pattern never grants more than it reads as.
 */
import { createHash } from 'node:crypto';
import { badRequest, parseDuration } from '@strongroom/sdk-plugin/host';
import { z } from 'zod';
import { blocksOf, parseHcl, type HclObject, type HclValue } from '../hcl/parse.js';
import { DEFAULT_POLICY_TEXT } from './default-policy.js';

export const CAPABILITIES = ['deny', 'create', 'read', 'update', 'patch', 'delete', 'list', 'scan', 'sudo'] as const;
export type Capability = (typeof CAPABILITIES)[number];

export const ROOT_POLICY_NAME = 'root';
export const DEFAULT_POLICY_NAME = 'default';

export type ParameterValue = string | number | boolean | null | ParameterValue[] | { [k: string]: ParameterValue };

export interface PathRule {
  /** The pattern as written, without a leading `/`. */
  path: string;
  capabilities: Capability[];
  /** Parameter name (lower-cased) -> allowed values; an empty list allows any value; `*` is any parameter. */
  allowedParameters?: Record<string, ParameterValue[]>;
  /** Parameter name (lower-cased) -> denied values; an empty list denies any value; `*` is any parameter. */
  deniedParameters?: Record<string, ParameterValue[]>;
  requiredParameters?: string[];
  /** Seconds. */
  minWrappingTtl?: number;
  maxWrappingTtl?: number;
}

export interface Policy {
  name: string;
  rules: PathRule[];
  /** The document as submitted (what `sys/policies/acl/:name` reads back). */
  text: string;
  /** Hash of name and text: ACLs are cached by it, so a rewritten policy never hits a stale ACL. */
  fingerprint: string;
}

/** Vault's legacy `policy = "..."` shorthand, still accepted. */
const LEGACY_POLICY: Record<string, Capability[]> = {
  deny: ['deny'],
  read: ['read', 'list'],
  write: ['create', 'read', 'update', 'patch', 'delete', 'list'],
  sudo: ['create', 'read', 'update', 'patch', 'delete', 'list', 'sudo'],
};

/** Keys Vault accepts in a path block that have no effect here (enterprise or OpenBao-only features). */
const IGNORED_PATH_KEYS = new Set(['mfa_methods', 'control_group', 'expiration', 'pagination_limit', 'list_scan_response_keys_filter_path']);

const parameterValue: z.ZodType<ParameterValue> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(parameterValue), z.record(z.string(), parameterValue)]),
);
const parameterMap = z.record(z.string(), z.array(parameterValue));
const durationValue = z.union([z.string(), z.number()]);

const pathBodySchema = z.object({
  capabilities: z.array(z.string()).optional(),
  policy: z.string().optional(),
  allowed_parameters: parameterMap.optional(),
  denied_parameters: parameterMap.optional(),
  required_parameters: z.array(z.string()).optional(),
  min_wrapping_ttl: durationValue.optional(),
  max_wrapping_ttl: durationValue.optional(),
});

const POLICY_NAME = /^[^\s\x00-\x1f\x7f]{1,256}$/;

/** Lower-cases and validates a policy name (400 naming `name`). */
export function normalizePolicyName(name: string): string {
  const normalized = name.trim().toLowerCase();
  if (!POLICY_NAME.test(normalized)) throw badRequest('name: must be 1 to 256 characters without whitespace or control characters');
  return normalized;
}

/** For `sys/policies/acl/:name` writes: `root` is built in and immutable. */
export function assertPolicyWritable(name: string): void {
  const n = normalizePolicyName(name);
  if (n === ROOT_POLICY_NAME) throw badRequest('cannot update the "root" policy');
  if (n === RESPONSE_WRAPPING_POLICY_NAME) throw badRequest(`cannot update the "${n}" policy`);
}

/** For deletes: `root` and `default` always exist. */
export function assertPolicyDeletable(name: string): void {
  const n = normalizePolicyName(name);
  if (n === ROOT_POLICY_NAME || n === DEFAULT_POLICY_NAME || n === RESPONSE_WRAPPING_POLICY_NAME) throw badRequest(`cannot delete the "${n}" policy`);
}

function fingerprintOf(name: string, text: string): string {
  return createHash('sha256').update(name).update('\0').update(text).digest('base64url').slice(0, 22);
}

/**
 * Checks a glob pattern: `*` only as the last character, `+` only as a whole
 * segment and never directly followed by `*` (Vault refuses `+*` as ambiguous).
 */
function validatePattern(raw: string, where: string): string {
  const pattern = raw.startsWith('/') ? raw.slice(1) : raw;
  const star = pattern.indexOf('*');
  if (star !== -1 && star !== pattern.length - 1) {
    throw badRequest(`${where}: "*" is only allowed at the end of a path (use "+" for one segment)`);
  }
  if (/(^|\/)\+\*$/.test(pattern)) throw badRequest(`${where}: "+*" is not allowed; use "+/*" or "+"`);
  return pattern;
}

function lowerKeys(map: Record<string, ParameterValue[]> | undefined): Record<string, ParameterValue[]> | undefined {
  if (!map) return undefined;
  const out: Record<string, ParameterValue[]> = {};
  for (const [k, v] of Object.entries(map)) {
    Object.defineProperty(out, k.toLowerCase(), { value: v, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function parsePathRule(pattern: string, body: HclObject, policyName: string): PathRule {
  const where = `policy "${policyName}": path "${pattern}"`;
  for (const key of Object.keys(body)) {
    if (!Object.hasOwn(pathBodySchema.shape, key) && !IGNORED_PATH_KEYS.has(key)) throw badRequest(`${where}: unknown key "${key}"`);
  }
  const known: Record<string, HclValue> = {};
  for (const key of Object.keys(pathBodySchema.shape)) {
    if (Object.hasOwn(body, key)) known[key] = body[key] as HclValue;
  }
  const parsed = pathBodySchema.safeParse(known);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw badRequest(`${where}: ${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`);
  }
  const b = parsed.data;
  const caps = new Set<Capability>();
  for (const c of b.capabilities ?? []) {
    const cap = c.trim().toLowerCase();
    if (!(CAPABILITIES as readonly string[]).includes(cap)) {
      throw badRequest(`${where}: capabilities: unknown capability "${c}" (expected one of ${CAPABILITIES.join(', ')})`);
    }
    caps.add(cap as Capability);
  }
  if (b.policy !== undefined) {
    const legacy = LEGACY_POLICY[b.policy.trim().toLowerCase()];
    if (!legacy) throw badRequest(`${where}: policy: unknown value "${b.policy}" (expected deny, read, write or sudo)`);
    for (const c of legacy) caps.add(c);
  }
  const ttl = (field: 'min_wrapping_ttl' | 'max_wrapping_ttl'): number | undefined => {
    const v = b[field];
    if (v === undefined) return undefined;
    try {
      return parseDuration(v);
    } catch {
      throw badRequest(`${where}: ${field}: invalid duration`);
    }
  };
  const rule: PathRule = {
    path: validatePattern(pattern, where),
    // deny overrides every other capability of the same rule.
    capabilities: caps.has('deny') ? ['deny'] : CAPABILITIES.filter((c) => caps.has(c)),
  };
  const allowed = lowerKeys(b.allowed_parameters);
  const denied = lowerKeys(b.denied_parameters);
  if (allowed) rule.allowedParameters = allowed;
  if (denied) rule.deniedParameters = denied;
  if (b.required_parameters) rule.requiredParameters = b.required_parameters.map((p) => p.toLowerCase());
  const min = ttl('min_wrapping_ttl');
  const max = ttl('max_wrapping_ttl');
  if (min !== undefined) rule.minWrappingTtl = min;
  if (max !== undefined) rule.maxWrappingTtl = max;
  if (min !== undefined && max !== undefined && max > 0 && min > max) {
    throw badRequest(`${where}: max_wrapping_ttl must not be less than min_wrapping_ttl`);
  }
  return rule;
}

/**
 * Parse a policy document (HCL or JSON). The name is lower-cased. Errors are
 * 400s naming the policy, the path pattern and the field.
 */
export function parsePolicy(name: string, text: string): Policy {
  const policyName = normalizePolicyName(name);
  if (policyName === ROOT_POLICY_NAME) throw badRequest('cannot update the "root" policy');
  if (typeof text !== 'string' || text.trim() === '') throw badRequest('policy: must not be empty');
  const doc = parseHcl(text, { source: `policy "${policyName}"` });
  for (const key of Object.keys(doc)) {
    if (key !== 'path' && key !== 'name') throw badRequest(`policy "${policyName}": unknown top-level key "${key}" (expected "path")`);
  }
  const blocks = blocksOf(doc.path, 1);
  if (blocks === null) throw badRequest(`policy "${policyName}": path: expected blocks like path "secret/*" { capabilities = [...] }`);
  const rules = blocks.map((blk) => parsePathRule(blk.labels[0] as string, blk.body, policyName));
  return { name: policyName, rules, text, fingerprint: fingerprintOf(policyName, text) };
}

/** The built-in `root` policy: no rules, recognised by name by `createAcl`, which then allows everything. */
export const ROOT_POLICY: Policy = Object.freeze({ name: ROOT_POLICY_NAME, rules: [], text: '', fingerprint: 'root' });

/**
 * The fixed policy of response-wrapping tokens (Vault's `response-wrapping`):
 * such a token can only be unwrapped. It is built in, never stored, and cannot
 * be written or deleted, so no operator edit can widen what a wrapping token
 * (often handed through untrusted hands) may do.
 */
export const RESPONSE_WRAPPING_POLICY_NAME = 'response-wrapping';
export const RESPONSE_WRAPPING_POLICY: Policy = parsePolicy(
  RESPONSE_WRAPPING_POLICY_NAME,
  'path "sys/wrapping/unwrap" {\n  capabilities = ["update"]\n}\npath "sys/wrapping/rewrap" {\n  capabilities = ["update"]\n}\n',
);

/** The built-in `default` policy as shipped (operators may rewrite it). */
export function builtinDefaultPolicy(): Policy {
  return parsePolicy(DEFAULT_POLICY_NAME, DEFAULT_POLICY_TEXT);
}
