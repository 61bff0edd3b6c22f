/**
 * Static role rotation: at creation, every rotation_period, and on demand,
 * run by the SDK's rotation scheduler (write-ahead entry `static-wal/<role>`
 * before the database is changed, replay after a crash with the same
 * password, per-role lock, retry with backoff; see the kit's rotation.ts).
 * This module says what one rotation of a static role is. The timer runs in
 * this process because the core's periodic call comes once a minute and
 * rotation_period may be 5 s.
 */
import { createRotationScheduler, type RotationTarget } from '@strongroom/sdk-plugin';
type RotationScheduler = ReturnType<typeof createRotationScheduler>;
import type { EngineBase } from './engine-base.js';
import { newPassword } from './credentials.js';
import type { RotationWal, StaticRole } from './store.js';

export interface StaticRotation extends RotationScheduler {
  /** The first rotation of a role not stored yet: the role is stored with its password only once it succeeded. */
  create(role: StaticRole): Promise<void>;
}

export function createStaticRotation(deps: EngineBase): StaticRotation {
  const { store } = deps;
  /** Roles being created: not stored until their first rotation commits. */
  const creating = new Map<string, StaticRole>();
  const roleOf = async (name: string) => creating.get(name) ?? (await store.staticRoles.get(name));

  const target: RotationTarget<RotationWal> = {
    wal: store.staticWals,
    names: () => store.staticRoles.list(),
    async nextDue(name) {
      const r = creating.get(name) ? null : await store.staticRoles.view(name);
      return r ? r.last_rotation + r.rotation_period * 1000 : null;
    },
    period: async (name) => {
      const r = await store.staticRoles.view(name);
      return r ? r.rotation_period * 1000 : null;
    },
    async prepare(name) {
      const role = await roleOf(name);
      if (!role) throw new Error(`static role "${name}" does not exist`);
      const cfg = await store.configs.view(role.db_name);
      if (!cfg) throw new Error(`connection "${role.db_name}" does not exist`);
      return { role: name, username: role.username, password: await newPassword(deps.system, cfg, role.credential_config), started: deps.now() };
    },
    // An entry for another user (the role was recreated) is not replayed.
    applies: async (name, wal) => (await roleOf(name))?.username === wal.username,
    async apply(name, wal) {
      const role = await roleOf(name);
      if (!role) throw new Error(`static role "${name}" does not exist`);
      await deps.connections.use(role.db_name, (client) =>
        client.updateUser({
          username: role.username,
          credentialType: 'password',
          password: { newPassword: wal.password, statements: { commands: role.rotation_statements } },
        }),
      );
    },
    async commit(name, wal) {
      const role = await roleOf(name);
      if (!role) return [];
      return [store.staticRoles.putOp(name, { ...role, password: wal.password, last_rotation: deps.now() })];
    },
  };

  const scheduler = createRotationScheduler(target, { now: deps.now, logger: deps.logger, lockKey: (name) => `static/${name}` });
  return {
    ...scheduler,
    async create(role) {
      await scheduler.locked(role.name, async () => {
        creating.set(role.name, role);
        try {
          await scheduler.rotate(role.name, { held: true });
        } catch (err) {
          await store.staticWals.delete(role.name).catch(() => undefined);
          throw err;
        } finally {
          creating.delete(role.name);
        }
      });
      await scheduler.reschedule(role.name);
    },
  };
}
