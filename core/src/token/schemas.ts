/**
 * HTTP-facing request schemas of `auth/token/*`, wire-lenient through the SDK's
 * field helpers (durations "1h" or 3600, bools as strings, lists as arrays or
 * comma strings). Unknown fields are stripped (the caller may warn about them);
 * bad values give a 400 naming the field through `parseOrBadRequest`.
 * Token ids are marked sensitive so audit HMACs them and logs never see them.
 */
import { z } from 'zod';
import { badRequest, f } from '@strongroom/sdk-plugin/host';
import type { CreateTokenRequest, TokenRole } from './types.js';

/** Values a client sends for "not set": treat like an absent key. */
const emptyToUndefined = (v: unknown): unknown => (v === '' || v === null ? undefined : v);

const tokenTypeField = z.preprocess(emptyToUndefined, z.enum(['service', 'batch']).optional());

/**
 * auth/token/create, create-orphan, create/:role_name. No `role_name` body
 * field (Vault's plain create paths have none): a role applies only through
 * the path form, so the ACL decides on the role's own path.
 */
export const createTokenSchema = z.object({
  id: f.sensitive(z.string()).optional(),
  policies: f.commaList().optional(),
  meta: f.map(f.string()).optional(),
  no_parent: f.bool().optional(),
  no_default_policy: f.bool().optional(),
  renewable: f.bool().optional(),
  ttl: f.duration().optional(),
  /** Deprecated alias of ttl. */
  lease: f.duration().optional(),
  type: tokenTypeField,
  explicit_max_ttl: f.duration().optional(),
  display_name: z.string().optional(),
  num_uses: f.int({ min: 0 }).optional(),
  period: f.duration().optional(),
  entity_alias: z.string().optional(),
});
export type CreateTokenBody = z.output<typeof createTokenSchema>;

export function toCreateTokenRequest(
  body: CreateTokenBody,
  ctx: { orphanEndpoint?: boolean; roleName?: string; callerHasSudo?: boolean; namespaceId?: string } = {},
): CreateTokenRequest {
  const req: CreateTokenRequest = {};
  if (body.id !== undefined && body.id !== '') req.id = body.id;
  if (ctx.roleName !== undefined && ctx.roleName !== '') req.roleName = ctx.roleName;
  if (body.policies !== undefined) req.policies = body.policies;
  if (body.meta !== undefined) req.meta = body.meta;
  if (body.no_parent !== undefined) req.noParent = body.no_parent;
  if (body.no_default_policy !== undefined) req.noDefaultPolicy = body.no_default_policy;
  if (body.renewable !== undefined) req.renewable = body.renewable;
  const ttl = body.ttl ?? body.lease;
  if (ttl !== undefined) req.ttl = ttl;
  if (body.type !== undefined) req.type = body.type;
  if (body.explicit_max_ttl !== undefined) req.explicitMaxTtl = body.explicit_max_ttl;
  if (body.display_name !== undefined) req.displayName = body.display_name;
  if (body.num_uses !== undefined) req.numUses = body.num_uses;
  if (body.period !== undefined) req.period = body.period;
  if (body.entity_alias !== undefined && body.entity_alias !== '') req.entityAlias = body.entity_alias;
  if (ctx.orphanEndpoint) req.orphanEndpoint = true;
  if (ctx.callerHasSudo) req.callerHasSudo = true;
  if (ctx.namespaceId !== undefined) req.namespaceId = ctx.namespaceId;
  return req;
}

/** auth/token/lookup, revoke, revoke-orphan (POST body; `token` is a secret: never log it). */
const tokenField = () => f.sensitive(z.string({ error: 'missing token' }).min(1, { error: 'missing token' }));

export const tokenBodySchema = z.object({ token: tokenField() });

/** auth/token/lookup-accessor, revoke-accessor */
export const accessorBodySchema = z.object({
  accessor: z.string({ error: 'missing accessor' }).min(1, { error: 'missing accessor' }),
});

/** auth/token/renew */
export const renewSchema = z.object({
  token: tokenField(),
  increment: f.duration().optional(),
});

/** auth/token/renew-self (a `token` field, if sent, is ignored as in Vault) */
export const renewSelfSchema = z.object({ increment: f.duration().optional() });

/** auth/token/renew-accessor */
export const renewAccessorSchema = z.object({
  accessor: z.string({ error: 'missing accessor' }).min(1, { error: 'missing accessor' }),
  increment: f.duration().optional(),
});

/** Role names: word characters, with `-` and `.` inside (Vault's pattern); case-sensitive, as in Vault, so the ACL sees the name used. */
export const roleNameSchema = z
  .string()
  .regex(/^\w(?:[\w.-]*\w)?$/, { error: 'role_name: letters, digits, "_", and "-" or "." inside' });

/** auth/token/roles/:role_name. Deprecated spellings (period, explicit_max_ttl, bound_cidrs) are folded in by toRoleInput. */
export const roleSchema = z.object({
  allowed_policies: f.commaList().optional(),
  disallowed_policies: f.commaList().optional(),
  allowed_policies_glob: f.commaList().optional(),
  disallowed_policies_glob: f.commaList().optional(),
  allowed_entity_aliases: f.commaList().optional(),
  orphan: f.bool().optional(),
  renewable: f.bool().optional(),
  path_suffix: z
    .string()
    .refine((s) => !s.split('/').includes('..'), { error: 'path_suffix cannot contain ".."' })
    .optional(),
  token_type: z.preprocess(emptyToUndefined, z.enum(['service', 'batch', 'default-service', 'default-batch']).optional()),
  token_bound_cidrs: f.commaList().optional(),
  bound_cidrs: f.commaList().optional(),
  token_explicit_max_ttl: f.duration().optional(),
  explicit_max_ttl: f.duration().optional(),
  token_no_default_policy: f.bool().optional(),
  token_num_uses: f.int({ min: 0 }).optional(),
  token_period: f.duration().optional(),
  period: f.duration().optional(),
  token_ttl: f.duration().optional(),
  token_max_ttl: f.duration().optional(),
});
export type RoleBody = z.output<typeof roleSchema>;

/** The fields the body sets, as a partial role (the store merges it over the existing role on update). */
export function toRoleInput(b: RoleBody): Partial<Omit<TokenRole, 'name'>> {
  const out: Partial<Omit<TokenRole, 'name'>> = {};
  const set = <K extends keyof Omit<TokenRole, 'name'>>(k: K, v: TokenRole[K] | undefined): void => {
    if (v !== undefined) out[k] = v;
  };
  set('allowedPolicies', b.allowed_policies);
  set('disallowedPolicies', b.disallowed_policies);
  set('allowedPoliciesGlob', b.allowed_policies_glob);
  set('disallowedPoliciesGlob', b.disallowed_policies_glob);
  set('allowedEntityAliases', b.allowed_entity_aliases);
  set('orphan', b.orphan);
  set('renewable', b.renewable);
  set('pathSuffix', b.path_suffix);
  set('tokenType', b.token_type);
  set('tokenBoundCidrs', b.token_bound_cidrs ?? b.bound_cidrs);
  set('tokenExplicitMaxTtl', b.token_explicit_max_ttl ?? b.explicit_max_ttl);
  set('tokenNoDefaultPolicy', b.token_no_default_policy);
  set('tokenNumUses', b.token_num_uses);
  set('tokenPeriod', b.token_period ?? b.period);
  set('tokenTtl', b.token_ttl);
  set('tokenMaxTtl', b.token_max_ttl);
  return out;
}

/** Parses with a schema, or throws a 400 whose messages name each bad field. */
export function parseOrBadRequest<T extends z.ZodType>(schema: T, data: unknown): z.output<T> {
  const r = schema.safeParse(data ?? {});
  if (r.success) return r.data;
  const details = r.error.issues.map((i) => `${i.path.length ? i.path.join('.') : 'request'}: ${i.message}`);
  throw badRequest(details[0] ?? 'invalid request', details);
}
