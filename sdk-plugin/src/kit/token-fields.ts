/**
 * The token settings every auth method's roles carry (as Vault's tokenutil):
 * declared once here, stored with the role, shown on read and turned into the
 * login's auth block. Imported as the `tokens` namespace: an auth method
 * spreads `tokens.fields` into its role path's fields, keeps
 * `tokens.Settings` in its role record (the `tokens.settings` schema),
 * applies a write with `tokens.apply`, shows them with `tokens.view`, and
 * answers logins with `tokens.auth(...)` and renewals with `tokens.renewal(...)`.
 */
import { z } from 'zod';
import { badRequest } from '../errors.js';
import { f } from '../fields.js';
import type { AuthSpec, LogicalResponse, RequestAuth } from '../logical.js';
import { renewedAuth } from '../define-backend.js';
import { validateCidrs } from './cidr.js';

/** Role fields of the token settings, with the legacy aliases (`policies`, `period`) Vault still accepts. */
export const fields = {
  token_ttl: f.duration().describe('Incremental token lifetime').optional(),
  token_max_ttl: f.duration().describe('Maximum token lifetime').optional(),
  token_policies: f.commaList().describe('Policies encoded on tokens').optional(),
  policies: f.deprecated(f.commaList().describe('Deprecated alias of token_policies')).optional(),
  token_bound_cidrs: f.commaList().describe('CIDRs allowed to authenticate; tokens are tied to them').optional(),
  token_explicit_max_ttl: f.duration().describe('Hard cap on token life').optional(),
  token_no_default_policy: f.bool().describe('Do not add the default policy').optional(),
  token_num_uses: f.int({ min: 0 }).describe('Max uses of a token; 0 is unlimited').optional(),
  token_period: f.duration().describe('Period of periodic tokens').optional(),
  period: f.deprecated(f.duration().describe('Deprecated alias of token_period')).optional(),
  token_type: f.enum(['', 'default', 'service', 'batch']).describe('Token type; empty or default for the mount default').optional(),
};

/** The stored form (seconds; `token_type` "" is the mount default). */
export const settings = z.object({
  token_ttl: z.number().default(0),
  token_max_ttl: z.number().default(0),
  token_policies: z.array(z.string()).default([]),
  token_bound_cidrs: z.array(z.string()).default([]),
  token_explicit_max_ttl: z.number().default(0),
  token_no_default_policy: z.boolean().default(false),
  token_num_uses: z.number().default(0),
  token_period: z.number().default(0),
  token_type: z.string().default(''),
});
export type Settings = z.output<typeof settings>;

export const defaults = (): Settings => settings.parse({});

/**
 * The settings after a role write: fields the caller sent (`provided`) replace
 * the current ones, a legacy alias counts only when the new name was not sent;
 * policies are trimmed, lower-cased, deduplicated and sorted; CIDRs checked.
 */
export function apply<T extends Settings>(current: T, data: Record<string, unknown>, provided: ReadonlySet<string>): T {
  const next: T = { ...current };
  const has = (k: string) => provided.has(k) && data[k] !== undefined;
  const take = (k: keyof Settings, alias?: string) => {
    const from = has(k) ? k : alias && has(alias) ? alias : null;
    if (from !== null) (next as Record<string, unknown>)[k] = data[from];
  };
  take('token_ttl');
  take('token_max_ttl');
  take('token_policies', 'policies');
  if (has('token_bound_cidrs')) next.token_bound_cidrs = validateCidrs(data.token_bound_cidrs as string[], 'token_bound_cidrs');
  take('token_explicit_max_ttl');
  take('token_no_default_policy');
  take('token_num_uses');
  take('token_period', 'period');
  take('token_type');
  if (next.token_type === 'default') next.token_type = '';
  next.token_policies = [...new Set(next.token_policies.map((p) => p.trim().toLowerCase()).filter((p) => p !== ''))].sort();
  if (next.token_max_ttl > 0 && next.token_ttl > next.token_max_ttl) throw badRequest('field "token_ttl": must not exceed token_max_ttl');
  if (next.token_type === 'batch' && next.token_period > 0) throw badRequest('field "token_type": batch tokens cannot be periodic');
  if (next.token_type === 'batch' && next.token_num_uses > 0) throw badRequest('field "token_type": batch tokens cannot have a use limit');
  return next;
}

/** The settings as a role read shows them (with the legacy aliases). */
export function view(s: Settings): Record<string, unknown> {
  return { ...viewLimits(s), token_policies: s.token_policies, policies: s.token_policies };
}

/**
 * Every setting but the policies, as a read shows them: also what the core's
 * token roles (auth/token/roles) show, whose policies are allowed lists instead.
 */
export function viewLimits(s: Omit<Settings, 'token_policies'>): Record<string, unknown> {
  return {
    token_ttl: s.token_ttl,
    token_max_ttl: s.token_max_ttl,
    token_bound_cidrs: s.token_bound_cidrs,
    token_explicit_max_ttl: s.token_explicit_max_ttl,
    token_no_default_policy: s.token_no_default_policy,
    token_num_uses: s.token_num_uses,
    token_period: s.token_period,
    period: s.token_period,
    token_type: s.token_type === '' ? 'default' : s.token_type,
  };
}

export interface AuthOptions {
  displayName: string;
  metadata?: Record<string, string>;
  /** Kept with the token and handed back on renewal (role name, ...); never shown. */
  internalData?: Record<string, unknown>;
  /** Stable alias of the login for identity (role id, user name). */
  aliasName?: string;
  /** Replaces the role's `token_bound_cidrs` (approle: a SecretID's own, or the login address). */
  boundCidrs?: string[];
}

/** The login response: an auth block carrying the role's token settings. */
export function auth(s: Settings, o: AuthOptions): LogicalResponse {
  const auth: AuthSpec = {
    displayName: o.displayName,
    policies: [...s.token_policies],
    noDefaultPolicy: s.token_no_default_policy,
    metadata: { ...(o.metadata ?? {}) },
    internalData: { ...(o.internalData ?? {}) },
    ttl: s.token_ttl,
    maxTtl: s.token_max_ttl,
    explicitMaxTtl: s.token_explicit_max_ttl,
    period: s.token_period,
    numUses: s.token_num_uses,
    renewable: true,
    boundCidrs: [...(o.boundCidrs ?? s.token_bound_cidrs)],
    tokenType: s.token_type === 'default' ? '' : s.token_type,
  };
  if (o.aliasName !== undefined) auth.aliasName = o.aliasName;
  return { auth };
}

/**
 * The answer of an `authRenew` handler once the login was re-checked: the
 * token keeps its policies and takes the role's current TTLs and period.
 */
export function renewal(auth: RequestAuth, s: Settings): LogicalResponse {
  return renewedAuth(auth, { ttl: s.token_ttl, maxTtl: s.token_max_ttl, period: s.token_period });
}
