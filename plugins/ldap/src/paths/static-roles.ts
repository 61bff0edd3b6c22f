/**
 * Static roles: static-role/:role_name, static-role (list, by GET or LIST),
 * static-cred/:role_name and rotate-role/:role_name. A static role maps to
 * an existing directory entry whose password the engine rotates
 * (rotation.ts); deleting the role leaves the entry in place.
 */
import { badRequest, definePath, f, staticCredentialPaths, scanStorage, type PathDef } from '@strongroom/sdk-plugin';
import { directoryError, isNoSuchObject } from '../directory.js';
import type { Engine } from '../engine.js';
import type { StaticRole } from '../store.js';

const MIN_ROTATION_PERIOD = 5;

const fields = {
  role_name: f.string().describe('Static role name'),
  username: f.string().describe('Name of the existing entry, searched under userdn with userattr; immutable').optional(),
  dn: f.string().describe('DN of the entry; takes precedence over username for the search; immutable').optional(),
  rotation_period: f.duration().describe('How often the password is rotated; at least 5 s').optional(),
};

export function staticRolePaths(engine: Engine): PathDef[] {
  const { store } = engine;
  const rotation = engine.rotations.statics;
  const names = async (req: { list: { after: string; limit: number } }) => ({ data: { keys: await store.staticRoles.list(req.list) } });

  const list = definePath({
    pattern: 'static-role',
    synopsis: 'List the static roles.',
    operations: {
      read: { summary: 'Names of the static roles (the spec lists them on GET).', handler: names },
      list: { summary: 'Names of the static roles.', handler: names },
      scan: { summary: 'Every name below the path (any depth), as SCAN pages it.', handler: scanStorage(store.staticRoles.prefix) },
    },
  });

  const role = definePath({
    pattern: 'static-role/:role_name',
    fields,
    synopsis: 'Manage a static role: a directory entry whose password is rotated.',
    existenceCheck: async (req) => (await store.staticRoles.get(req.data.role_name)) !== null,
    operations: {
      read: {
        summary: 'Read a static role.',
        handler: async (req) => {
          const r = await store.staticRoles.get(req.data.role_name);
          if (!r) return null;
          return { data: { dn: r.dn, username: r.username, rotation_period: r.rotation_period, last_service_rotation: new Date(r.last_rotation).toISOString() } };
        },
      },
      update: { summary: 'Create or update a static role; a new role has its password rotated at once.', handler: (req) => write(req.data, req.provided) },
      delete: {
        summary: 'Delete a static role; the entry stays in the directory.',
        handler: async (req) =>
          rotation.locked(req.data.role_name, async () => {
            rotation.unschedule(req.data.role_name);
            await store.staticRoles.delete(req.data.role_name);
            await rotation.discard(req.data.role_name);
            return null;
          }),
      },
    },
  });

  const write = async (d: Record<string, unknown>, provided: ReadonlySet<string>) => {
    const name = String(d.role_name);
    const has = (k: string) => provided.has(k) && d[k] !== undefined && d[k] !== '';
    const existing = await store.staticRoles.get(name);
    if (existing && has('username') && d.username !== existing.username) throw badRequest('username: cannot be changed on an existing static role');
    if (existing && has('dn') && d.dn !== existing.dn) throw badRequest('dn: cannot be changed on an existing static role');
    const period = has('rotation_period') ? Number(d.rotation_period) : existing?.rotation_period;
    if (period === undefined) throw badRequest('rotation_period: missing required field');
    if (period < MIN_ROTATION_PERIOD) throw badRequest(`rotation_period: must be at least ${MIN_ROTATION_PERIOD} seconds`);
    if (existing) {
      await rotation.locked(name, async () => {
        const current = (await store.staticRoles.get(name)) ?? existing;
        await store.staticRoles.put(name, { ...current, rotation_period: period });
      });
      await rotation.reschedule(name);
      return null;
    }
    const username = has('username') ? String(d.username) : '';
    if (!username) throw badRequest('username: missing required field');
    const given = has('dn') ? String(d.dn) : '';
    await engine.config();
    const dn = await engine.directory.findDn(username, given || undefined).catch((err: unknown) => {
      if (isNoSuchObject(err)) throw badRequest(`dn: no entry ${given} in the directory`);
      throw directoryError(`${given ? 'dn' : 'username'}: looking the entry up failed`, err, []);
    });
    const r: StaticRole = { name, dn, username, rotation_period: period, password: '', last_password: '', last_rotation: 0 };
    // A new role is saved only once its first rotation succeeded: the engine knows its password from the start.
    await rotation.create(r);
    return null;
  };

  return [
    list,
    role,
    ...staticCredentialPaths({ roles: store.staticRoles, rotation, credentials: 'static-cred', param: 'role_name', show: (r) => ({ dn: r.dn, last_password: r.last_password }) }),
  ];
}
