/** Dynamic roles: roles/:name and roles/ (list). */
import { badRequest, definePath, f, readRecord, scanStorage, type PathDef } from '@strongroom/sdk-plugin';
import { checkCredentialConfig } from '../credentials.js';
import type { EngineDeps } from '../deps.js';
import type { CredentialType, DynamicRole } from '../store.js';

const CREDENTIAL_TYPES = ['password', 'rsa_private_key', 'client_certificate'] as const;

const roleFields = {
  name: f.string().describe('Role name'),
  db_name: f.string().describe('Connection to create users in').optional(),
  default_ttl: f.duration().describe('Lease TTL; 0 for the mount default').optional(),
  max_ttl: f.duration().describe('Maximum lease TTL; 0 for the mount maximum').optional(),
  creation_statements: f.commaList().describe('Statements that create the user ({{name}}, {{password}}, {{expiration}})').optional(),
  revocation_statements: f.commaList().describe('Statements that drop the user').optional(),
  rollback_statements: f.commaList().describe('Statements run when creation fails halfway').optional(),
  renew_statements: f.commaList().describe('Statements run on lease renewal').optional(),
  credential_type: f.enum(CREDENTIAL_TYPES).describe('password, rsa_private_key or client_certificate').optional(),
  credential_config: f.map().describe('Options of the credential type').optional(),
};

export function rolePaths(deps: EngineDeps): PathDef[] {
  const { store } = deps;
  const list = definePath({
    pattern: 'roles/',
    synopsis: 'List the dynamic roles.',
    operations: {
      list: { summary: 'Names of the roles.', handler: () => store.roles.list() },
      scan: { summary: 'Every name below the path (any depth), as SCAN pages it.', handler: scanStorage(store.roles.prefix) },
    },
  });

  const role = definePath({
    pattern: 'roles/:name',
    fields: roleFields,
    synopsis: 'Manage a dynamic role: the statements that create and drop its users.',
    existenceCheck: async (req) => (await store.roles.get(req.data.name)) !== null,
    operations: {
      read: {
        summary: 'Read a role.',
        handler: (req) => readRecord(store.roles, req.data.name),
      },
      create: { summary: 'Create a role.', handler: (req) => write(req.data, req.provided, null) },
      update: { summary: 'Update a role; fields not sent keep their values.', handler: async (req) => write(req.data, req.provided, await store.roles.get(req.data.name)) },
      delete: {
        summary: 'Delete a role (leases already issued stay revocable).',
        handler: async (req) => {
          await store.roles.delete(req.data.name);
          return null;
        },
      },
    },
  });

  const write = async (d: Record<string, unknown>, provided: ReadonlySet<string>, existing: DynamicRole | null) => {
    const has = (k: string) => provided.has(k) && d[k] !== undefined;
    const pick = <K extends keyof DynamicRole>(k: K, dflt: DynamicRole[K]): DynamicRole[K] => (has(k) ? (d[k] as DynamicRole[K]) : (existing?.[k] ?? dflt));
    const credentialType = pick('credential_type', 'password') as CredentialType;
    const r: DynamicRole = {
      name: String(d.name),
      db_name: pick('db_name', ''),
      default_ttl: pick('default_ttl', 0),
      max_ttl: pick('max_ttl', 0),
      creation_statements: pick('creation_statements', []),
      revocation_statements: pick('revocation_statements', []),
      rollback_statements: pick('rollback_statements', []),
      renew_statements: pick('renew_statements', []),
      credential_type: credentialType,
      credential_config: has('credential_config')
        ? checkCredentialConfig(credentialType, d.credential_config as Record<string, unknown>)
        : has('credential_type') && existing?.credential_type !== credentialType
          ? checkCredentialConfig(credentialType, {})
          : (existing?.credential_config ?? checkCredentialConfig(credentialType, {})),
    };
    if (!r.db_name) throw badRequest('db_name: missing required field');
    if (r.creation_statements.length === 0) throw badRequest('creation_statements: missing required field');
    if (r.max_ttl > 0 && r.default_ttl > r.max_ttl) throw badRequest('default_ttl: cannot be greater than max_ttl');
    await store.roles.put(r.name, r);
    return null;
  };

  return [list, role];
}
