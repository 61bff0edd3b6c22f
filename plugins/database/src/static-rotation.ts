/**
 * Static role rotation: at creation, every rotation_period, and on demand,
 * run by the SDK's rotation scheduler (write-ahead entry `static-wal/<role>`
 * before the database is changed, replay after a crash with the same
 * password, per-role lock, retry with backoff; see the kit's rotation.ts).
 * This module says what one rotation of a static role is. The timer runs in
 * this process because the core's periodic call comes once a minute and
 * rotation_period may be 5 s.
 */
import { createStaticRoleRotation, publishEvent, type RotationTarget, type StaticRoleRotation } from '@strongroom/sdk-plugin';
import type { EngineBase } from './engine-base.js';
import { newPassword } from './credentials.js';
import type { RotationWal, StaticRole } from './store.js';

export type StaticRotation = StaticRoleRotation<StaticRole>;

export function createStaticRotation(deps: EngineBase): StaticRotation {
  const { store } = deps;
  const target = (roleOf: (name: string) => Promise<StaticRole | null>): Omit<RotationTarget<RotationWal>, 'names' | 'nextDue' | 'period'> => ({
    wal: store.staticWals,
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
  });
  return createStaticRoleRotation(store.staticRoles, target, {
    now: deps.now,
    logger: deps.logger,
    lockKey: (name) => `static/${name}`,
    onRotated: (name) => publishEvent(deps, 'database/static-rotate', `static-creds/${name}`, { role: name }),
  });
}
