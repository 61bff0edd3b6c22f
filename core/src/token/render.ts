/**
 * Response shapes of the token store, as Vault renders them. The client token
 * id appears only where the caller already holds it (lookup-self, lookup with
 * the id, a create or login response); an accessor lookup never shows it.
 */
import { tokens } from '@strongroom/sdk-plugin/host';
import type { TokenEntry, TokenRole } from './types.js';

const seconds = (ms: number): number => Math.floor(ms / 1000);
const rfc3339 = (ms: number): string => new Date(ms).toISOString();

/** Seconds left before expiry (0 for a token that never expires). */
function remainingTtl(entry: TokenEntry, now: number): number {
  return entry.expireTime === 0 ? 0 : Math.max(0, Math.floor((entry.expireTime - now) / 1000));
}

/** `data` of auth/token/lookup, lookup-self and lookup-accessor. Pass `id` only when the caller sent it. */
export function renderLookup(entry: TokenEntry, now: number, id?: string): Record<string, unknown> {
  const data: Record<string, unknown> = {
    accessor: entry.accessor,
    creation_time: seconds(entry.creationTime),
    creation_ttl: entry.creationTtl,
    display_name: entry.displayName,
    entity_id: entry.entityId,
    expire_time: entry.expireTime === 0 ? null : rfc3339(entry.expireTime),
    explicit_max_ttl: entry.explicitMaxTtl,
    id: id ?? '',
    meta: Object.keys(entry.meta).length ? { ...entry.meta } : null,
    // -1 marks a token whose last use this request is spending: none are left.
    num_uses: Math.max(entry.numUses, 0),
    orphan: entry.parent === '',
    path: entry.path,
    policies: [...entry.policies],
    ttl: remainingTtl(entry, now),
    type: entry.type,
  };
  // Vault shows lease fields only for tokens that have a lease, i.e. that expire.
  if (entry.expireTime !== 0) {
    data.issue_time = rfc3339(entry.creationTime);
    data.renewable = entry.renewable;
    if (entry.lastRenewalTime !== 0) {
      data.last_renewal_time = seconds(entry.lastRenewalTime);
      data.last_renewal = rfc3339(entry.lastRenewalTime);
    }
  }
  if (entry.role !== '') data.role = entry.role;
  if (entry.period !== 0) data.period = entry.period;
  if (entry.boundCidrs.length) data.bound_cidrs = [...entry.boundCidrs];
  return data;
}

/** The `auth` block of a create or login response. */
export function renderAuth(
  entry: TokenEntry,
  id: string,
  now: number,
  identityPolicies: readonly string[] = [],
): Record<string, unknown> {
  const tokenPolicies = [...entry.policies];
  const auth: Record<string, unknown> = {
    client_token: id,
    accessor: entry.accessor,
    policies: [...new Set([...tokenPolicies, ...identityPolicies])].sort(),
    token_policies: tokenPolicies,
    metadata: Object.keys(entry.meta).length ? { ...entry.meta } : null,
    // The TTL this create or renew granted, as Vault reports it (lookup shows the remaining ttl).
    lease_duration: entry.ttl,
    renewable: entry.renewable,
    entity_id: entry.entityId,
    token_type: entry.type,
    orphan: entry.parent === '',
    mfa_requirement: null,
    num_uses: entry.numUses,
  };
  if (identityPolicies.length) auth.identity_policies = [...identityPolicies];
  return auth;
}

/** `data` of a role read: the token settings as every auth method's roles show them, and Vault's older aliases. */
export function renderRole(role: TokenRole): Record<string, unknown> {
  return {
    name: role.name,
    allowed_policies: role.allowedPolicies,
    disallowed_policies: role.disallowedPolicies,
    allowed_policies_glob: role.allowedPoliciesGlob,
    disallowed_policies_glob: role.disallowedPoliciesGlob,
    allowed_entity_aliases: role.allowedEntityAliases,
    orphan: role.orphan,
    renewable: role.renewable,
    path_suffix: role.pathSuffix,
    ...tokens.viewLimits({
      token_ttl: role.tokenTtl,
      token_max_ttl: role.tokenMaxTtl,
      token_bound_cidrs: role.tokenBoundCidrs,
      token_explicit_max_ttl: role.tokenExplicitMaxTtl,
      token_no_default_policy: role.tokenNoDefaultPolicy,
      token_num_uses: role.tokenNumUses,
      token_period: role.tokenPeriod,
      token_type: role.tokenType,
    }),
    bound_cidrs: role.tokenBoundCidrs,
    explicit_max_ttl: role.tokenExplicitMaxTtl,
  };
}
