/** Token-store roles: defaults, merging an update over an existing role, validation. */
import { badRequest, validateCidrs } from '@strongroom/sdk-plugin/host';
import type { TokenRole } from './types.js';

export const ROLE_NAME = /^\w(?:[\w.-]*\w)?$/;

export function defaultRole(name: string): TokenRole {
  return {
    name,
    allowedPolicies: [],
    disallowedPolicies: [],
    allowedPoliciesGlob: [],
    disallowedPoliciesGlob: [],
    allowedEntityAliases: [],
    orphan: false,
    renewable: true,
    pathSuffix: '',
    tokenType: 'default-service',
    tokenBoundCidrs: [],
    tokenExplicitMaxTtl: 0,
    tokenNoDefaultPolicy: false,
    tokenNumUses: 0,
    tokenPeriod: 0,
    tokenTtl: 0,
    tokenMaxTtl: 0,
  };
}

const lowerList = (l: readonly string[]): string[] => [...new Set(l.map((p) => p.trim().toLowerCase()).filter(Boolean))].sort();

/** Applies the fields an update sets over `base`, normalizes and validates the result (400 naming the field). */
export function mergeRole(base: TokenRole, input: Partial<Omit<TokenRole, 'name'>>): TokenRole {
  const r: TokenRole = { ...base, ...input, name: base.name };
  r.allowedPolicies = lowerList(r.allowedPolicies);
  r.disallowedPolicies = lowerList(r.disallowedPolicies);
  r.allowedPoliciesGlob = lowerList(r.allowedPoliciesGlob);
  r.disallowedPoliciesGlob = lowerList(r.disallowedPoliciesGlob);
  r.tokenBoundCidrs = validateCidrs(r.tokenBoundCidrs, 'token_bound_cidrs');
  if (r.pathSuffix.split('/').includes('..')) throw badRequest('path_suffix: cannot contain ".."');
  for (const [field, v] of [
    ['token_explicit_max_ttl', r.tokenExplicitMaxTtl],
    ['token_num_uses', r.tokenNumUses],
    ['token_period', r.tokenPeriod],
    ['token_ttl', r.tokenTtl],
    ['token_max_ttl', r.tokenMaxTtl],
  ] as const) {
    if (!Number.isInteger(v) || v < 0) throw badRequest(`${field}: must be a non-negative integer`);
  }
  if (r.tokenMaxTtl > 0 && r.tokenTtl > r.tokenMaxTtl) throw badRequest('token_ttl: cannot be greater than token_max_ttl');
  if (r.tokenType === 'batch' && r.tokenPeriod > 0) {
    throw badRequest('token_type: batch tokens cannot be periodic');
  }
  if (r.tokenType === 'batch' && r.tokenNumUses > 0) {
    throw badRequest('token_type: batch tokens cannot have a use limit');
  }
  return r;
}
