/**
 * Token creation as a pure planner: (parent, request, role, now) -> the token to store.
 * Every rule Vault's token store applies at creation lives here (policies a subset of the
 * parent's unless root or sudo, a role's allowed and disallowed lists, orphan and custom-id
 * privileges, use limits, periodic tokens, TTLs from ttl.ts capped by the parent's remaining
 * life); the token store only reads the role, writes the result and keys it. No I/O, no clock.
 */
import type { AuthSpec } from '@strongroom/sdk-plugin/host';
import { badRequest, permissionDenied, validateCidrs } from '@strongroom/sdk-plugin/host';
import { RESPONSE_WRAPPING_POLICY_NAME } from '../policy/policy.js';
import { isSubset, matchesAnyGlob, sanitizePolicies } from './policies.js';
import { calculateTtl } from './ttl.js';
import type { CreateTokenRequest, LoginContext, TokenEntry, TokenRole, TokenType } from './types.js';

/** A token's stored fields before it is keyed (its id, HMAC key and accessor come at write). */
export type TokenFields = Omit<TokenEntry, 'key' | 'accessor'>;

export interface TokenPlan {
  fields: TokenFields;
  warnings: string[];
  /** A custom id asked by a root or sudo caller (already checked). */
  customId?: string;
}

/** The system's default and max TTL, seconds. */
export interface SystemTtls {
  systemDefaultTtl: number;
  systemMaxTtl: number;
}

const CUSTOM_ID = /^[A-Za-z0-9_-]{1,128}$/;

export function checkCustomId(id: string): void {
  if (!CUSTOM_ID.test(id)) throw badRequest('id: custom token ids use 1-128 characters of [A-Za-z0-9_-]');
}

/** Vault's display-name rule: "token-<name>" with anything but [A-Za-z0-9-] replaced by "-". */
function tokenDisplayName(name: string | undefined): string {
  if (name === undefined || name === '') return 'token';
  return `token-${name}`.replace(/[^a-zA-Z0-9-]/g, '-').replace(/-+$/, '');
}

/** A new token's policies from its parent's, the request and the role. */
function resolvePolicies(
  parentPolicies: readonly string[],
  requested: readonly string[],
  noDefault: boolean,
  sudo: boolean,
  role: TokenRole | null,
): string[] {
  const fromParent = (): string[] => {
    if (requested.length === 0) {
      const inherited = [...parentPolicies];
      return noDefault ? inherited.filter((p) => p !== 'default') : inherited;
    }
    if (sudo) return sanitizePolicies(requested, !noDefault);
    const asked = sanitizePolicies(requested, false);
    if (!isSubset(sanitizePolicies(parentPolicies, false), asked)) {
      throw badRequest('policies: child policies must be subset of parent');
    }
    // A child gets `default` only if its parent has it.
    return sanitizePolicies(requested, !noDefault && parentPolicies.includes('default'));
  };
  if (role === null) return fromParent();

  let policies: string[];
  if (role.allowedPolicies.length > 0 || role.allowedPoliciesGlob.length > 0) {
    // A role's allowed list replaces the parent-subset rule (Vault token roles).
    const allowed = sanitizePolicies(role.allowedPolicies, !noDefault);
    if (requested.length === 0) {
      policies = allowed;
    } else {
      policies = sanitizePolicies(requested, !noDefault);
      const outside = policies.filter((p) => !allowed.includes(p) && !matchesAnyGlob(role.allowedPoliciesGlob, p));
      if (outside.length) {
        throw badRequest(`policies: token policies (${outside.join(', ')}) must be subset of the role's allowed policies`);
      }
    }
  } else {
    policies = fromParent();
  }
  const isDisallowed = (p: string): boolean =>
    role.disallowedPolicies.includes(p) || matchesAnyGlob(role.disallowedPoliciesGlob, p);
  if (requested.length > 0) {
    const bad = policies.filter(isDisallowed);
    if (bad.length) throw badRequest(`policies: token policies contain disallowed policies (${bad.join(', ')})`);
    return policies;
  }
  return policies.filter((p) => !isDisallowed(p));
}

/**
 * A child (or orphan) token from auth/token/create*: the parent's and the role's rules applied
 * to the request (Vault's token store). `parent` null: created by the core itself (root).
 * The caller has read the role (null when none was named) and checked the parent is live.
 */
export function planCreate(parent: TokenEntry | null, req: CreateTokenRequest, role: TokenRole | null, now: number, sys: SystemTtls): TokenPlan {
  const t = now;
  const warnings: string[] = [];
  const parentPolicies: readonly string[] = parent === null ? ['root'] : parent.policies;
  const parentIsRoot = parentPolicies.includes('root');
  const sudo = parentIsRoot || req.callerHasSudo === true;
  const namespaceId = req.namespaceId ?? parent?.namespaceId ?? 'root';

  let type: TokenType = req.type ?? 'service';
  if (role !== null) {
    if (role.tokenType === 'service' || role.tokenType === 'batch') {
      if (req.type !== undefined && req.type !== role.tokenType) {
        throw badRequest(`type: role ${role.name} only issues ${role.tokenType} tokens`);
      }
      type = role.tokenType;
    } else {
      type = req.type ?? (role.tokenType === 'default-batch' ? 'batch' : 'service');
    }
  }

  let orphan = parent === null || req.orphanEndpoint === true || role?.orphan === true;
  if (req.noParent === true) {
    if (!sudo) throw badRequest('root or sudo privileges required to create orphan token'); // 400, as Vault answers it
    orphan = true;
  }
  if (!orphan && parent?.type === 'batch') throw badRequest('batch tokens cannot create child tokens');
  // Vault's rule: a use-limited token creates no token at all, orphan or not
  // (create-orphan and a role with orphan=true skipped the check before).
  if (parent !== null && parent.numUses !== 0) {
    throw badRequest('a token with a limited use count cannot create tokens');
  }

  if (req.id !== undefined) {
    if (!sudo) throw permissionDenied('root or sudo privileges required to specify token id');
    if (type === 'batch') throw badRequest('id: batch tokens cannot have a custom id');
    checkCustomId(req.id);
  }

  let numUses = req.numUses ?? 0;
  if (!Number.isInteger(numUses) || numUses < 0) throw badRequest('num_uses: number of uses cannot be negative');
  if (role !== null && role.tokenNumUses > 0 && (numUses === 0 || role.tokenNumUses < numUses)) numUses = role.tokenNumUses;
  if (type === 'batch' && numUses > 0) throw badRequest('num_uses: batch tokens cannot have a use limit');

  const noDefault = req.noDefaultPolicy === true || role?.tokenNoDefaultPolicy === true;
  const policies = resolvePolicies(parentPolicies, req.policies ?? [], noDefault, sudo, role);
  if (policies.includes('root')) {
    if (!parentIsRoot) throw permissionDenied('root tokens may not be created without parent token being root');
    if (type === 'batch') throw badRequest('type: batch tokens cannot be root tokens');
  }

  if (req.entityAlias !== undefined) {
    if (role === null || !matchesAnyGlob(role.allowedEntityAliases, req.entityAlias)) {
      throw badRequest('entity_alias: invalid or not allowed by the role');
    }
    throw badRequest('entity_alias: identity entities are not supported');
  }

  let explicitMaxTtl = req.explicitMaxTtl ?? 0;
  if (role !== null && role.tokenExplicitMaxTtl > 0) {
    if (explicitMaxTtl === 0) explicitMaxTtl = role.tokenExplicitMaxTtl;
    else {
      explicitMaxTtl = Math.min(explicitMaxTtl, role.tokenExplicitMaxTtl);
      warnings.push(`explicit max TTL specified both during creation call and in role; using the lesser value of ${explicitMaxTtl} seconds`);
    }
  }

  let period = req.period ?? 0;
  if (period > 0 && !sudo && !(role !== null && role.tokenPeriod > 0)) {
    throw permissionDenied('root or sudo privileges required to create periodic token');
  }
  if (role !== null && role.tokenPeriod > 0) period = role.tokenPeriod;
  if (type === 'batch' && period > 0) throw badRequest('period: batch tokens cannot be periodic');

  let renewable = (req.renewable ?? true) && role?.renewable !== false && type === 'service';
  const maxTtl = role?.tokenMaxTtl ?? 0;
  let ttl = req.ttl ?? 0;
  if (ttl === 0 && role !== null) ttl = role.tokenTtl;
  const isRootToken = policies.length === 1 && policies[0] === 'root';
  if (period > 0 || ttl > 0 || !isRootToken) {
    const r = calculateTtl({ increment: 0, ttl, period, maxTtl, explicitMaxTtl, startTime: t, now: t, ...sys });
    ttl = r.ttl;
    warnings.push(...r.warnings);
  }
  if (ttl === 0 && explicitMaxTtl > 0) ttl = explicitMaxTtl;
  if (ttl === 0) {
    if (parent !== null && parent.expireTime !== 0) {
      throw badRequest('expiring root tokens cannot create non-expiring root tokens');
    }
    renewable = false;
  }
  // A child cannot outlive its parent: the parent's expiry revokes the whole subtree anyway.
  if (!orphan && parent !== null && parent.expireTime !== 0) {
    const left = Math.floor((parent.expireTime - t) / 1000);
    if (left <= 0) throw permissionDenied('parent token is not valid');
    if (ttl > left) {
      warnings.push(`TTL of ${ttl}s exceeded the parent token's remaining TTL of ${left}s; TTL value is capped accordingly`);
      ttl = left;
    }
  }

  const suffix = role !== null ? `${role.name}${role.pathSuffix ? `/${role.pathSuffix}` : ''}` : '';
  const path = role !== null ? `auth/token/create/${suffix}` : req.orphanEndpoint ? 'auth/token/create-orphan' : 'auth/token/create';


  const fields: TokenFields = {
      parent: orphan || parent === null ? '' : parent.key,
    policies,
    path,
    meta: { ...(req.meta ?? {}) },
    displayName: tokenDisplayName(req.displayName),
    numUses,
    creationTime: t,
    creationTtl: ttl,
    ttl,
    explicitMaxTtl,
    period,
    maxTtl,
    expireTime: ttl === 0 ? 0 : t + ttl * 1000,
    lastRenewalTime: 0,
    type,
    renewable,
    boundCidrs: [...(role?.tokenBoundCidrs ?? [])],
    entityId: '',
    namespaceId,
    role: role?.name ?? '',
    // The creator's identity, never the request's meta: identity templates must not be fed by the caller.
    ...(parent?.alias ? { alias: parent.alias } : {}),
  };
  return { fields, warnings, ...(req.id !== undefined ? { customId: req.id } : {}) };
}

/** The root token: no parent, no TTL, policy root only (init, generate-root, `token create` as root). */
export function planRoot(now: number): TokenFields {
  return {
    parent: '',
    policies: ['root'],
    path: 'auth/token/root',
    meta: {},
    displayName: 'root',
    numUses: 0,
    creationTime: now,
    creationTtl: 0,
    ttl: 0,
    explicitMaxTtl: 0,
    period: 0,
    maxTtl: 0,
    expireTime: 0,
    lastRenewalTime: 0,
    type: 'service',
    renewable: false,
    boundCidrs: [],
    entityId: '',
    namespaceId: 'root',
    role: '',
  };
}

/** A response-wrapping token: orphan, single use, not renewable, policy `response-wrapping` only. */
export function planWrapping(opts: { ttl: number; path: string; namespaceId: string }, now: number): TokenFields {
  return {
    parent: '',
    policies: [RESPONSE_WRAPPING_POLICY_NAME],
    path: opts.path,
    meta: {},
    displayName: '',
    numUses: 1,
    creationTime: now,
    creationTtl: opts.ttl,
    ttl: opts.ttl,
    explicitMaxTtl: 0,
    period: 0,
    maxTtl: 0,
    expireTime: now + opts.ttl * 1000,
    lastRenewalTime: 0,
    type: 'service',
    renewable: false,
    boundCidrs: [],
    entityId: '',
    namespaceId: opts.namespaceId,
    role: '',
  };
}

/** A login token from an auth method's answer (an orphan; its mount re-checks renewals). */
export function planLogin(auth: AuthSpec, ctx: LoginContext, now: number, sys: SystemTtls): TokenPlan {
  const t = now;
  const policies = sanitizePolicies(auth.policies, !auth.noDefaultPolicy);
  if (policies.includes('root')) throw permissionDenied('auth methods cannot create root tokens');
  const type: TokenType = auth.tokenType === 'batch' || auth.tokenType === 'service' ? auth.tokenType : (ctx.mountTokenType ?? 'service');
  if (type === 'batch' && (auth.numUses > 0 || auth.period > 0)) {
    throw badRequest('batch tokens cannot be periodic or have a use limit');
  }
  const maxTtl = auth.maxTtl > 0 ? auth.maxTtl : (ctx.mountMaxTtl ?? 0);
  const { ttl, warnings } = calculateTtl({
    increment: 0,
    ttl: auth.ttl > 0 ? auth.ttl : (ctx.mountDefaultTtl ?? 0),
    period: auth.period,
    maxTtl,
    explicitMaxTtl: auth.explicitMaxTtl,
    startTime: t,
    now: t,
    ...sys,
  });
  const source = ctx.mountPath.replace(/^auth\//, '').replace(/\//g, '-');
  const fields: TokenFields = {
    parent: '',
    policies,
    path: ctx.path,
    meta: { ...auth.metadata },
    displayName: `${source}${auth.displayName}`.replace(/-+$/, ''),
    numUses: auth.numUses,
    creationTime: t,
    creationTtl: ttl,
    ttl,
    explicitMaxTtl: auth.explicitMaxTtl,
    period: auth.period,
    maxTtl,
    expireTime: t + ttl * 1000,
    lastRenewalTime: 0,
    type,
    renewable: auth.renewable && type === 'service',
    boundCidrs: validateCidrs(auth.boundCidrs, 'token_bound_cidrs'),
    entityId: ctx.entityId ?? '',
    namespaceId: ctx.namespaceId ?? 'root',
    role: '',
    ...(auth.aliasName && ctx.mountAccessor ? { alias: { mountAccessor: ctx.mountAccessor, name: auth.aliasName, metadata: { ...auth.metadata } } } : {}),
    // Batch tokens carry their entry inside the token and are never renewed.
    ...(type === 'service' && ctx.mountUuid ? { login: { mountUuid: ctx.mountUuid, internalData: { ...auth.internalData } } } : {}),
  };
  return { fields, warnings };
}
