/**
 * Static roles: static-roles/:name, static-roles/ (list), static-creds/:name,
 * rotate-role/:name. A static role maps to an existing database user whose
 * password the engine rotates (see static-rotation.ts); deleting the role
 * leaves the user in the database.
 */
import { badRequest, definePath, f, staticCredentialPaths, scanStorage, type PathDef } from '@strongroom/sdk-plugin';
import { checkCredentialConfig } from '../credentials.js';
import { roleAllowed, type EngineDeps } from '../deps.js';
import type { StaticRole } from '../store.js';

const MIN_ROTATION_PERIOD = 5;

const fields = {
  name: f.string().describe('Static role name'),
  db_name: f.string().describe('Connection of the database user').optional(),
  username: f.string().describe('Existing database user').optional(),
  rotation_period: f.duration().describe('How often the password is rotated; at least 5 s').optional(),
  rotation_statements: f.commaList().describe('Statements that set the password ({{name}}, {{password}})').optional(),
  credential_type: f.enum(['password']).describe('Only password for static roles in this build').optional(),
  credential_config: f.map().describe('Options of the credential type (password_policy)').optional(),
};

export function staticRolePaths(deps: EngineDeps): PathDef[] {
  const { store, rotation } = deps;

  const list = definePath({
    pattern: 'static-roles/',
    synopsis: 'List the static roles.',
    operations: {
      list: { summary: 'Names of the static roles.', handler: () => store.staticRoles.list() },
      scan: { summary: 'Every name below the path (any depth), as SCAN pages it.', handler: scanStorage(store.staticRoles.prefix) },
    },
  });

  const role = definePath({
    pattern: 'static-roles/:name',
    fields,
    synopsis: "Manage a static role: a database user whose password is rotated.",
    existenceCheck: async (req) => (await store.staticRoles.get(req.data.name)) !== null,
    operations: {
      read: {
        summary: 'Read a static role.',
        handler: async (req) => {
          const r = await store.staticRoles.get(req.data.name);
          if (!r) return null;
          return {
            data: {
              db_name: r.db_name,
              username: r.username,
              rotation_period: r.rotation_period,
              rotation_statements: r.rotation_statements,
              credential_type: r.credential_type,
              credential_config: r.credential_config,
              last_service_rotation: new Date(r.last_rotation).toISOString(),
            },
          };
        },
      },
      create: { summary: 'Create a static role; the password is rotated at once.', handler: (req) => write(req.data, req.provided) },
      update: { summary: 'Update a static role; fields not sent keep their values.', handler: (req) => write(req.data, req.provided) },
      delete: {
        summary: 'Delete a static role; the database user is left in place.',
        handler: async (req) =>
          rotation.locked(req.data.name, async () => {
            rotation.unschedule(req.data.name);
            // The role and an unfinished rotation of it go together.
            await store.records.batch([store.staticRoles.deleteOp(req.data.name), store.staticWals.deleteOp(req.data.name)]);
            return null;
          }),
      },
    },
  });

  const write = async (d: Record<string, unknown>, provided: ReadonlySet<string>) => {
    const name = String(d.name);
    const has = (k: string) => provided.has(k) && d[k] !== undefined;
    const existing = await store.staticRoles.get(name);
    if (existing && has('username') && d.username !== existing.username) throw badRequest('username: cannot be changed on an existing static role');
    if (existing && has('db_name') && d.db_name !== existing.db_name) throw badRequest('db_name: cannot be changed on an existing static role');
    const dbName = has('db_name') ? String(d.db_name) : existing?.db_name;
    const username = has('username') ? String(d.username) : existing?.username;
    const period = has('rotation_period') ? Number(d.rotation_period) : existing?.rotation_period;
    if (!dbName) throw badRequest('db_name: missing required field');
    if (!username) throw badRequest('username: missing required field');
    if (period === undefined) throw badRequest('rotation_period: missing required field');
    if (period < MIN_ROTATION_PERIOD) throw badRequest(`rotation_period: must be at least ${MIN_ROTATION_PERIOD} seconds`);
    const cfg = await store.configs.get(dbName);
    if (!cfg) throw badRequest(`db_name: connection "${dbName}" does not exist`);
    if (!roleAllowed(cfg.allowed_roles, name)) throw badRequest(`role "${name}" is not allowed by connection "${dbName}" (allowed_roles)`);
    const r: StaticRole = {
      name,
      db_name: dbName,
      username,
      rotation_period: period,
      rotation_statements: has('rotation_statements') ? (d.rotation_statements as string[]) : (existing?.rotation_statements ?? []),
      credential_type: 'password',
      credential_config: has('credential_config') ? checkCredentialConfig('password', d.credential_config as Record<string, unknown>) : (existing?.credential_config ?? {}),
      password: existing?.password ?? '',
      last_rotation: existing?.last_rotation ?? 0,
    };
    if (existing) {
      await rotation.locked(name, async () => {
        const current = (await store.staticRoles.get(name)) ?? existing;
        const next = { ...r, password: current.password, last_rotation: current.last_rotation };
        await store.staticRoles.put(next.name, next);
      });
      await rotation.reschedule(name);
      return null;
    }
    // A new role is saved only once its first rotation succeeded: the engine knows its password from the start.
    await rotation.create(r);
    return null;
  };

  return [list, role, ...staticCredentialPaths({ roles: store.staticRoles, rotation, credentials: 'static-creds', param: 'name' })];
}
