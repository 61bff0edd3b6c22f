/**
 * SecretID management. A SecretID is shown once, at generation; storage holds
 * only its HMAC (see store.ts). Requested limits may only narrow the role's:
 * num_uses and ttl not above the role's, CIDRs subsets of the role's.
 */
import { randomUUID } from 'node:crypto';
import { badRequest, cidr, definePath, f, type HandlerRequest, type KeyedMutex, type PathDef } from '@strongroom/sdk-plugin';
import type { ApproleStore, RoleEntry, SecretIdEntry } from '../store.js';
import { ZERO_TIME } from '../store.js';

interface Deps {
  store: ApproleStore;
  mutex: KeyedMutex;
  mountId: string;
  now: () => Date;
}

const generationFields = {
  role_name: f.string().describe('Name of the role'),
  metadata: f.string().describe('JSON object of string values, copied onto issued tokens and logged in audit in plaintext').optional(),
  cidr_list: f.commaList().describe("CIDRs logins with this SecretID may come from; a subset of the role's").optional(),
  token_bound_cidrs: f.commaList().describe("CIDRs the issued tokens are bound to; a subset of the role's").optional(),
  num_uses: f.int({ min: 0 }).describe("Uses of this SecretID; 0 is unlimited; not above the role's").optional(),
  ttl: f.duration().describe("Lifetime of this SecretID; not above the role's").optional(),
};

function parseMetadata(raw: string | undefined): Record<string, string> {
  if (raw === undefined || raw.trim() === '') return {};
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    throw badRequest('field "metadata": must be a JSON object of string values');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v) || Object.values(v).some((x) => typeof x !== 'string')) {
    throw badRequest('field "metadata": must be a JSON object of string values');
  }
  return v as Record<string, string>;
}

/** Resolves a requested limit against the role's: omitted takes the role's; given must not exceed a non-zero role value. */
function narrowed(requested: number | undefined, roleValue: number, field: string, roleField: string): number {
  if (requested === undefined) return roleValue;
  if (roleValue > 0 && (requested === 0 || requested > roleValue)) throw badRequest(`field "${field}": cannot be higher than the role's ${roleField}`);
  return requested;
}

function lookupView(e: SecretIdEntry): Record<string, unknown> {
  return {
    cidr_list: e.cidr_list,
    token_bound_cidrs: e.token_bound_cidrs,
    creation_time: e.creation_time,
    expiration_time: e.expiration_time,
    last_updated_time: e.last_updated_time,
    metadata: e.metadata,
    secret_id_accessor: e.accessor,
    secret_id_num_uses: e.num_uses,
    secret_id_ttl: e.ttl,
  };
}

export function isExpired(e: SecretIdEntry, now: Date): boolean {
  return e.expiration_time !== ZERO_TIME && Date.parse(e.expiration_time) <= now.getTime();
}

export function secretIdPaths(deps: Deps): PathDef[] {
  const { store, now } = deps;

  const roleOr400 = async (name: string): Promise<RoleEntry> => {
    const r = await store.getRole(name);
    if (!r) throw badRequest(`role "${name}" does not exist`);
    return r;
  };

  const issue = async (req: HandlerRequest<{ role_name: string; metadata?: string | undefined; cidr_list?: string[] | undefined; token_bound_cidrs?: string[] | undefined; num_uses?: number | undefined; ttl?: number | undefined }>, secretId: string) => {
    const role = await roleOr400(req.data.role_name);
    const metadata = parseMetadata(req.data.metadata);
    const cidrList = cidr.validateCidrs(req.data.cidr_list ?? [], 'cidr_list');
    if (role.secret_id_bound_cidrs.length > 0 && !cidr.isSubset(cidrList, role.secret_id_bound_cidrs, 'cidr_list')) {
      throw badRequest('field "cidr_list": must be a subset of the role\'s secret_id_bound_cidrs');
    }
    const tokenCidrs = cidr.validateCidrs(req.data.token_bound_cidrs ?? [], 'token_bound_cidrs');
    if (role.token_bound_cidrs.length > 0 && !cidr.isSubset(tokenCidrs, role.token_bound_cidrs, 'token_bound_cidrs')) {
      throw badRequest('field "token_bound_cidrs": must be a subset of the role\'s token_bound_cidrs');
    }
    const numUses = narrowed(req.data.num_uses, role.secret_id_num_uses, 'num_uses', 'secret_id_num_uses');
    const ttl = narrowed(req.data.ttl, role.secret_id_ttl, 'ttl', 'secret_id_ttl');
    const hmac = await store.hmac(secretId);
    if (await store.getSecretId(role.name, hmac)) throw badRequest('field "secret_id": already registered');
    const t = now();
    const entry: SecretIdEntry = {
      hmac,
      accessor: randomUUID(),
      role: role.name,
      metadata,
      cidr_list: cidrList,
      token_bound_cidrs: tokenCidrs,
      num_uses: numUses,
      ttl,
      creation_time: t.toISOString(),
      expiration_time: ttl > 0 ? new Date(t.getTime() + ttl * 1000).toISOString() : ZERO_TIME,
      last_updated_time: t.toISOString(),
    };
    await store.putSecretId(entry);
    return { data: { secret_id: secretId, secret_id_accessor: entry.accessor, secret_id_ttl: ttl, secret_id_num_uses: numUses } };
  };

  const byAccessor = async (role: string, accessor: string) => {
    const h = await store.hmacForAccessor(role, accessor);
    return h === null ? null : store.getSecretId(role, h);
  };

  const roleName = { role_name: f.string().describe('Name of the role') };
  const secretIdField = { ...roleName, secret_id: f.sensitive(f.string().describe('The SecretID')).optional() };
  const accessorField = { ...roleName, secret_id_accessor: f.string().describe('Accessor of the SecretID').optional() };
  const need = (v: string | undefined, field: string) => {
    if (v === undefined || v === '') throw badRequest(`field "${field}": missing ${field}`);
    return v;
  };

  const destroy = (getEntry: (role: string) => Promise<SecretIdEntry | null>) => async (role: string) => {
    const e = await getEntry(role);
    if (!e) return;
    await deps.mutex.run(`${deps.mountId}:sid:${e.role}:${e.hmac}`, () => store.deleteSecretId(e));
  };

  return [
    definePath({
      pattern: 'role/:role_name/secret-id',
      fields: generationFields,
      operations: {
        update: {
          summary: 'Generate a SecretID',
          handler: async (req) => issue(req, randomUUID()),
        },
        list: {
          summary: 'List the accessors of the SecretIDs of a role',
          handler: async (req) => {
            await roleOr400(req.data.role_name);
            return store.listAccessors(req.data.role_name);
          },
        },
      },
      synopsis: 'Generate a SecretID, or list the accessors of the existing ones.',
    }),
    definePath({
      pattern: 'role/:role_name/custom-secret-id',
      fields: { ...generationFields, secret_id: f.sensitive(f.string().describe('The SecretID to register')).optional() },
      operations: {
        update: { summary: 'Register a custom SecretID', handler: async (req) => issue(req, need(req.data.secret_id, 'secret_id')) },
      },
      synopsis: 'Register a SecretID of your own choosing.',
    }),
    definePath({
      pattern: 'role/:role_name/secret-id/lookup',
      fields: secretIdField,
      operations: {
        update: {
          summary: 'Read the properties of a SecretID',
          handler: async (req) => {
            await roleOr400(req.data.role_name);
            const e = await store.getSecretId(req.data.role_name, await store.hmac(need(req.data.secret_id, 'secret_id')));
            return e ? { data: lookupView(e) } : null;
          },
        },
      },
      synopsis: 'Read the properties of a SecretID.',
    }),
    definePath({
      pattern: 'role/:role_name/secret-id/destroy',
      fields: secretIdField,
      operations: {
        update: {
          summary: 'Destroy a SecretID',
          handler: async (req) => {
            const h = await store.hmac(need(req.data.secret_id, 'secret_id'));
            await destroy((role) => store.getSecretId(role, h))(req.data.role_name);
          },
        },
      },
      synopsis: 'Destroy a SecretID.',
    }),
    definePath({
      pattern: 'role/:role_name/secret-id-accessor/lookup',
      fields: accessorField,
      operations: {
        update: {
          summary: 'Read the properties of a SecretID by its accessor',
          handler: async (req) => {
            await roleOr400(req.data.role_name);
            const e = await byAccessor(req.data.role_name, need(req.data.secret_id_accessor, 'secret_id_accessor'));
            return e ? { data: lookupView(e) } : null;
          },
        },
      },
      synopsis: 'Read the properties of a SecretID by its accessor.',
    }),
    definePath({
      pattern: 'role/:role_name/secret-id-accessor/destroy',
      fields: accessorField,
      operations: {
        update: {
          summary: 'Destroy a SecretID by its accessor',
          handler: async (req) => {
            const a = need(req.data.secret_id_accessor, 'secret_id_accessor');
            await destroy((role) => byAccessor(role, a))(req.data.role_name);
          },
        },
      },
      synopsis: 'Destroy a SecretID by its accessor.',
    }),
  ];
}
