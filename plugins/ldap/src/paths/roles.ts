/**
 * Dynamic roles (role/:role_name, LIST role) and their credentials
 * (creds/:role_name, a lease). Creation runs the rendered creation LDIF
 * record by record and stops at the first error, then runs the rollback LDIF
 * past errors; revocation runs the deletion LDIF past errors (an entry
 * already gone counts as deleted) and fails, to be retried by the core,
 * when any other error remains. The password is never kept in the lease.
 */
import { badRequest, compileTemplate, definePath, defineSecret, f, leaseTtl, readRecord, scanStorage, type HandlerRequest, type PathDef, type SecretTypeDef } from '@strongroom/sdk-plugin';
import { directoryError, isNoSuchObject } from '../directory.js';
import type { Engine } from '../engine.js';
import { SAMPLE_LDIF_FIELDS, applyRecord, compileLdif, decodeMaybeBase64, parseLdif, type LdifFields } from '../ldif.js';
import type { DynamicRole } from '../store.js';

const CREDS_SECRET_TYPE = 'dynamic';
const DEFAULT_USERNAME_TEMPLATE = 'v_{{.DisplayName}}_{{.RoleName}}_{{random 10}}_{{unix_time}}';

const LDIF_FIELDS = ['creation_ldif', 'deletion_ldif', 'rollback_ldif'] as const;

const roleFields = {
  role_name: f.string().describe('Role name'),
  creation_ldif: f.string().describe('Templated LDIF creating the account (several records run in order); may be base64').optional(),
  deletion_ldif: f.string().describe('Templated LDIF run at revocation, past errors; may be base64').optional(),
  rollback_ldif: f.string().describe('Templated LDIF run when creation fails, past errors; may be base64').optional(),
  username_template: f.string().describe(`Template of usernames (default ${DEFAULT_USERNAME_TEMPLATE})`).optional(),
  default_ttl: f.duration().describe('Lease TTL; 0 for the mount default').optional(),
  max_ttl: f.duration().describe('Maximum lease TTL; 0 for the mount maximum').optional(),
};

/** Checks an LDIF template: it compiles, renders over sample fields and parses. */
function checkLdif(field: string, src: string) {
  parseLdif(compileLdif(src, field).render({ ...SAMPLE_LDIF_FIELDS }), field);
}

interface CredsInternal {
  role: string;
  username: string;
  distinguished_names: string[];
  /** The deletion LDIF template at issue time: the entries were made by that version of the role. */
  deletion_ldif: string;
  fields: Omit<LdifFields, 'Password'>;
}

/** The role's TTLs, the mount's where the role sets none. */
const roleTtls = (engine: Engine, role: Readonly<DynamicRole>) => leaseTtl.resolve(engine.system, role.default_ttl, role.max_ttl);

export function dynamicSecret(engine: Engine): SecretTypeDef {
  const internalOf = (req: HandlerRequest): CredsInternal => {
    const d = (req.secret?.internalData ?? {}) as Partial<CredsInternal>;
    if (typeof d.deletion_ldif !== 'string' || !d.fields) throw badRequest('lease is missing its deletion LDIF');
    return d as CredsInternal;
  };
  return defineSecret({
    type: CREDS_SECRET_TYPE,
    renew: async (req) => {
      const i = internalOf(req);
      const role = await engine.store.roles.view(i.role);
      if (!role) throw badRequest(`role "${i.role}" no longer exists; the lease cannot be renewed`);
      return leaseTtl.renewed(req.secret!, await roleTtls(engine, role), engine.now());
    },
    revoke: async (req) => {
      const i = internalOf(req);
      const records = parseLdif(compileLdif(i.deletion_ldif, 'deletion_ldif').render({ ...i.fields, Password: '' }), 'deletion_ldif');
      const errors: string[] = [];
      await engine.directory.use(async (client) => {
        for (const r of records) {
          await applyRecord(client, r).catch((err: unknown) => {
            if (!(r.changetype === 'delete' && isNoSuchObject(err))) errors.push(directoryError(r.dn, err, []).message);
          });
        }
      });
      if (errors.length) throw directoryError('deletion LDIF failed', new Error(errors.join('; ')), []);
      return null;
    },
  });
}

export function rolePaths(engine: Engine, secret: SecretTypeDef): PathDef[] {
  const { store } = engine;
  const names = async (req: { list: { after: string; limit: number } }) => ({ data: { keys: await store.roles.list(req.list) } });

  const list = definePath({
    pattern: 'role',
    synopsis: 'List the dynamic roles.',
    operations: { list: { summary: 'Names of the dynamic roles.', handler: names }, scan: { summary: 'Every name below the path (any depth), as SCAN pages it.', handler: scanStorage(store.roles.prefix) } },
  });

  const role = definePath({
    pattern: 'role/:role_name',
    fields: roleFields,
    synopsis: 'Manage a dynamic role: the LDIF that creates and deletes its accounts.',
    existenceCheck: async (req) => (await store.roles.view(req.data.role_name)) !== null,
    operations: {
      read: {
        summary: 'Read a role (LDIF decoded).',
        handler: (req) => readRecord(store.roles, req.data.role_name),
      },
      update: {
        summary: 'Create a role, or update the fields sent; an empty value removes one.',
        handler: async (req) => {
          const d = req.data as Record<string, unknown>;
          const name = String(d.role_name);
          const existing = await store.roles.get(name);
          const r: DynamicRole = existing ?? { name, creation_ldif: '', deletion_ldif: '', rollback_ldif: '', username_template: '', default_ttl: 0, max_ttl: 0 };
          for (const k of LDIF_FIELDS) if (req.provided.has(k) && d[k] !== undefined) r[k] = decodeMaybeBase64(String(d[k]));
          if (req.provided.has('username_template') && d.username_template !== undefined) r.username_template = String(d.username_template);
          if (req.provided.has('default_ttl') && d.default_ttl !== undefined) r.default_ttl = Number(d.default_ttl);
          if (req.provided.has('max_ttl') && d.max_ttl !== undefined) r.max_ttl = Number(d.max_ttl);
          if (!r.creation_ldif.trim()) throw badRequest('creation_ldif: missing required field');
          if (!r.deletion_ldif.trim()) throw badRequest('deletion_ldif: missing required field');
          for (const k of LDIF_FIELDS) if (r[k].trim()) checkLdif(k, r[k]);
          if (r.username_template) compileTemplate(r.username_template, { field: 'username_template' }).render({ DisplayName: 'token', RoleName: name });
          if (r.max_ttl > 0 && r.default_ttl > r.max_ttl) throw badRequest('default_ttl: cannot be greater than max_ttl');
          const mountMax = await engine.system.maxLeaseTtl();
          if (mountMax > 0 && r.max_ttl > mountMax) throw badRequest(`max_ttl: cannot be longer than the mount's maximum (${mountMax} s)`);
          await store.roles.put(name, r);
          return null;
        },
      },
      delete: {
        summary: 'Delete a role (leases already issued stay revocable).',
        handler: async (req) => {
          await store.roles.delete(req.data.role_name);
          return null;
        },
      },
    },
  });

  const creds = definePath({
    pattern: 'creds/:role_name',
    fields: { role_name: f.string().describe('Role name') },
    synopsis: 'Create a directory account for a role (a lease).',
    operations: {
      read: {
        summary: 'Run the creation LDIF and return the account.',
        handler: async (req) => {
          const role = await store.roles.view(req.data.role_name);
          if (!role) throw badRequest(`unknown role: ${req.data.role_name}`);
          const cfg = await engine.config();
          const { ttl, maxTtl } = await roleTtls(engine, role);
          const username = compileTemplate(role.username_template || DEFAULT_USERNAME_TEMPLATE, { field: 'username_template' }).render({ DisplayName: req.client.displayName, RoleName: role.name });
          const password = await engine.newPassword(cfg);
          const issued = engine.now();
          const expires = issued + ttl * 1000;
          const fields: LdifFields = {
            Username: username,
            Password: password,
            RoleName: role.name,
            DisplayName: req.client.displayName,
            IssueTime: new Date(issued).toISOString().replace(/\.\d{3}Z$/, 'Z'),
            ExpirationTime: new Date(expires).toISOString().replace(/\.\d{3}Z$/, 'Z'),
            IssueTimeSeconds: Math.floor(issued / 1000),
            ExpirationTimeSeconds: Math.floor(expires / 1000),
          };
          const records = parseLdif(compileLdif(role.creation_ldif, 'creation_ldif').render({ ...fields }), 'creation_ldif');
          await engine.directory.use(async (client) => {
            for (const r of records) {
              try {
                await applyRecord(client, r);
              } catch (err) {
                if (role.rollback_ldif.trim()) {
                  const rollback = parseLdif(compileLdif(role.rollback_ldif, 'rollback_ldif').render({ ...fields }), 'rollback_ldif');
                  for (const rb of rollback) await applyRecord(client, rb).catch(() => undefined);
                }
                throw directoryError(`creation LDIF failed at ${r.dn}`, err, [password]);
              }
            }
          });
          const { Password: _pw, ...kept } = fields;
          const internal: CredsInternal = { role: role.name, username, distinguished_names: records.map((r) => r.dn), deletion_ldif: role.deletion_ldif, fields: kept };
          return secret.response({ username, password, distinguished_names: internal.distinguished_names }, { ...internal }, { ttl, maxTtl, renewable: true });
        },
      },
    },
  });

  return [list, role, creds];
}
