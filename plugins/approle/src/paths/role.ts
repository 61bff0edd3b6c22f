import { randomUUID } from 'node:crypto';
import { badRequest, cidr, definePath, f, tokens, scanStorage, type KeyedMutex, type PathDef } from '@strongroom/sdk-plugin';
import type { ApproleStore, RoleEntry } from '../store.js';

const NAME_RE = /^[A-Za-z0-9 _.-]+$/;

/** Role names: letters, digits, space, hyphen, underscore, period; under 4096 bytes. */
function checkRoleName(name: string): void {
  if (!NAME_RE.test(name) || Buffer.byteLength(name, 'utf8') >= 4096) {
    throw badRequest('field "role_name": must be letters, digits, space, hyphen, underscore or period, under 4096 bytes');
  }
}

const roleFields = {
  bind_secret_id: f.bool().describe('Login requires secret_id').optional(),
  secret_id_bound_cidrs: f.commaList().describe('CIDR blocks from which login is allowed').optional(),
  secret_id_num_uses: f.int({ min: 0 }).describe('Uses per SecretID; 0 is unlimited').optional(),
  secret_id_ttl: f.duration().describe('SecretID lifetime; 0 never expires').optional(),
  local_secret_ids: f.bool().describe('SecretIDs are cluster local; only at creation').optional(),
  ...tokens.fields,
  token_strictly_bind_ip: f.bool().describe('Bind the token to the login source IP').optional(),
};

function defaultRole(name: string): RoleEntry {
  return {
    name,
    role_id: '',
    bind_secret_id: true,
    secret_id_bound_cidrs: [],
    secret_id_num_uses: 0,
    secret_id_ttl: 0,
    local_secret_ids: false,
    ...tokens.defaults(),
    token_strictly_bind_ip: false,
  };
}

/** Applies the fields the caller sent onto `r` (aliases resolved), then checks the role-wide rules. */
function applyRoleInput(r: RoleEntry, d: Record<string, unknown>, provided: ReadonlySet<string>, creating: boolean): RoleEntry {
  const next = { ...r };
  const has = (k: string) => provided.has(k) && d[k] !== undefined;
  const set = <K extends keyof RoleEntry>(k: K, from: string = k) => {
    if (has(from)) next[k] = d[from] as RoleEntry[K];
  };
  set('bind_secret_id');
  if (has('secret_id_bound_cidrs')) next.secret_id_bound_cidrs = cidr.validateCidrs(d.secret_id_bound_cidrs as string[], 'secret_id_bound_cidrs');
  set('secret_id_num_uses');
  set('secret_id_ttl');
  if (has('local_secret_ids')) {
    if (!creating && d.local_secret_ids !== r.local_secret_ids) throw badRequest('field "local_secret_ids": can only be set at role creation');
    next.local_secret_ids = d.local_secret_ids as boolean;
  }
  set('token_strictly_bind_ip');
  const withTokens = tokens.apply(next, d, provided);
  checkRole(withTokens);
  return withTokens;
}

function checkRole(r: RoleEntry): void {
  if (!r.bind_secret_id && r.secret_id_bound_cidrs.length === 0 && r.token_bound_cidrs.length === 0) {
    throw badRequest('at least one constraint should be enabled on the role: bind_secret_id, secret_id_bound_cidrs or token_bound_cidrs');
  }
  if (r.token_strictly_bind_ip && r.token_bound_cidrs.length > 0) {
    throw badRequest('field "token_strictly_bind_ip": conflicts with token_bound_cidrs');
  }
}

function roleView(r: RoleEntry): Record<string, unknown> {
  return {
    bind_secret_id: r.bind_secret_id,
    secret_id_bound_cidrs: r.secret_id_bound_cidrs,
    secret_id_num_uses: r.secret_id_num_uses,
    secret_id_ttl: r.secret_id_ttl,
    local_secret_ids: r.local_secret_ids,
    ...tokens.view(r),
    token_strictly_bind_ip: r.token_strictly_bind_ip,
  };
}

interface Deps {
  store: ApproleStore;
  mutex: KeyedMutex;
  mountId: string;
  /** Drops every SecretID of a deleted role. */
  dropSecretIds: (role: string) => Promise<void>;
}

export function roleListPath({ store }: Pick<Deps, 'store'>): PathDef {
  return definePath({
    pattern: 'role',
    operations: {
      list: {
        summary: 'List the roles',
        handler: () => store.listRoles(),
      },
      scan: { summary: 'Every name below the path (any depth), as SCAN pages it.', handler: scanStorage(store.rolePrefix) },
    },
    synopsis: 'List the AppRole roles.',
  });
}

export function rolePath({ store, mutex, mountId, dropSecretIds }: Deps): PathDef {
  return definePath({
    pattern: 'role/:role_name',
    fields: {
      role_name: f.string().describe('Name of the role'),
      role_id: f.string().describe('A custom RoleID; generated when omitted at creation').optional(),
      ...roleFields,
    },
    existenceCheck: async (req) => (await store.getRole(req.data.role_name)) !== null,
    operations: {
      read: {
        summary: 'Read a role',
        handler: async (req) => {
          const r = await store.getRole(req.data.role_name);
          return r ? { data: roleView(r) } : null;
        },
      },
      update: {
        summary: 'Create or update a role',
        handler: async (req) => {
          const name = req.data.role_name;
          checkRoleName(name);
          await mutex.run(`${mountId}:role:${name}`, async () => {
            const existing = await store.getRole(name);
            const next = applyRoleInput(existing ?? defaultRole(name), req.data, req.provided, existing === null);
            const wanted = req.provided.has('role_id') ? (req.data.role_id ?? '').trim() : '';
            if (req.provided.has('role_id') && wanted === '') throw badRequest('field "role_id": must not be empty');
            const previous = next.role_id;
            if (wanted !== '' && wanted !== next.role_id) {
              const owner = await store.roleNameForRoleId(wanted);
              if (owner !== null && owner !== name) throw badRequest('field "role_id": already in use');
              next.role_id = wanted;
            }
            if (next.role_id === '') next.role_id = randomUUID();
            await store.saveRole(next, previous);
          });
        },
      },
      delete: {
        summary: 'Delete a role and its SecretIDs',
        handler: async (req) => {
          const name = req.data.role_name;
          await mutex.run(`${mountId}:role:${name}`, async () => {
            const r = await store.getRole(name);
            if (!r) return;
            await dropSecretIds(name);
            await store.deleteRole(r);
          });
        },
      },
    },
    synopsis: 'Register a role with the backend.',
    description: `A role sets the conditions of a login: whether a SecretID is required, the CIDRs
logins may come from, and the properties of the issued token. At least one of
\`bind_secret_id\`, \`secret_id_bound_cidrs\` and \`token_bound_cidrs\` must be set.`,
  });
}

export function roleIdPath({ store, mutex, mountId }: Pick<Deps, 'store' | 'mutex' | 'mountId'>): PathDef {
  return definePath({
    pattern: 'role/:role_name/role-id',
    fields: {
      role_name: f.string().describe('Name of the role'),
      role_id: f.string().describe('The new RoleID').optional(),
    },
    operations: {
      read: {
        summary: 'Read the RoleID of a role',
        handler: async (req) => {
          const r = await store.getRole(req.data.role_name);
          return r ? { data: { role_id: r.role_id } } : null;
        },
      },
      update: {
        summary: 'Set a custom RoleID',
        handler: async (req) => {
          const wanted = (req.data.role_id ?? '').trim();
          if (wanted === '') throw badRequest('field "role_id": missing role_id');
          const name = req.data.role_name;
          return mutex.run(`${mountId}:role:${name}`, async () => {
            const r = await store.getRole(name);
            if (!r) throw badRequest(`role "${name}" does not exist`);
            const owner = await store.roleNameForRoleId(wanted);
            if (owner !== null && owner !== name) throw badRequest('field "role_id": already in use');
            await store.saveRole({ ...r, role_id: wanted }, r.role_id);
            return { data: { role_id: wanted } };
          });
        },
      },
    },
    synopsis: 'Read or set the RoleID of a role.',
  });
}

/** The single-field endpoints (so ACLs can delegate one field): endpoint -> role field and the field names read back. */
const SINGLE_FIELDS = [
  { endpoint: 'policies', input: 'token_policies', fields: ['token_policies', 'policies'] },
  { endpoint: 'secret-id-num-uses', input: 'secret_id_num_uses', fields: ['secret_id_num_uses'] },
  { endpoint: 'secret-id-ttl', input: 'secret_id_ttl', fields: ['secret_id_ttl'] },
  { endpoint: 'token-ttl', input: 'token_ttl', fields: ['token_ttl'] },
  { endpoint: 'token-max-ttl', input: 'token_max_ttl', fields: ['token_max_ttl'] },
  { endpoint: 'bind-secret-id', input: 'bind_secret_id', fields: ['bind_secret_id'] },
  { endpoint: 'secret-id-bound-cidrs', input: 'secret_id_bound_cidrs', fields: ['secret_id_bound_cidrs'] },
  { endpoint: 'token-bound-cidrs', input: 'token_bound_cidrs', fields: ['token_bound_cidrs'] },
  { endpoint: 'period', input: 'token_period', fields: ['token_period', 'period'] },
] as const;

export function roleFieldPaths({ store, mutex, mountId }: Pick<Deps, 'store' | 'mutex' | 'mountId'>): PathDef[] {
  return SINGLE_FIELDS.map(({ endpoint, input, fields }) => {
    const schemas: Record<string, (typeof roleFields)[keyof typeof roleFields]> = {};
    for (const k of fields) schemas[k] = roleFields[k];
    const change = async (name: string, data: Record<string, unknown>, provided: ReadonlySet<string>) =>
      mutex.run(`${mountId}:role:${name}`, async () => {
        const r = await store.getRole(name);
        if (!r) throw badRequest(`role "${name}" does not exist`);
        await store.saveRole(applyRoleInput(r, data, provided, false));
      });
    return definePath({
      pattern: `role/:role_name/${endpoint}`,
      fields: { role_name: f.string().describe('Name of the role'), ...schemas },
      operations: {
        read: {
          summary: `Read the ${input} of a role`,
          handler: async (req) => {
            const r = await store.getRole(req.data.role_name);
            if (!r) return null;
            const view = roleView(r);
            return { data: Object.fromEntries(fields.map((k) => [k, view[k]])) };
          },
        },
        update: {
          summary: `Set the ${input} of a role`,
          handler: async (req) => {
            const given = fields.some((k) => req.provided.has(k) && (req.data as Record<string, unknown>)[k] !== undefined);
            if (!given) throw badRequest(`field "${input}": missing ${input}`);
            await change(req.data.role_name, req.data as Record<string, unknown>, req.provided);
          },
        },
        delete: {
          summary: `Reset the ${input} of a role to its default`,
          handler: async (req) => {
            const value = defaultRole('')[input];
            await change(req.data.role_name, { [input]: value }, new Set([input]));
          },
        },
      },
      synopsis: `Read, set or reset the ${input} of a role.`,
    });
  });
}
