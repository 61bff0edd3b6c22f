/**
 * What one password rotation is, for each kind of entry the engine rotates;
 * the kit's rotation scheduler runs them (write-ahead entry before the
 * directory changes, per-name lock, replay or settlement after a crash,
 * retry with backoff, the due timer):
 *
 *  - static roles (`static-wal/<role>`): at creation, every rotation_period
 *    and on rotate-role. A rotation cut short is REPLAYED: its password is set
 *    again (idempotent) and committed, so the engine always ends up holding a
 *    password the directory has;
 *  - the bind entry (`root-wal/root`, rotate-root): it cannot be replayed
 *    blindly (the connection that would set it binds with one of the two
 *    passwords), so it is SETTLED by binding: the new password if it binds,
 *    else the stored one; neither: the entry stays and uses fail;
 *  - library accounts (`account-wal/<account>`): at every check-in and when an
 *    account joins a set; settled by binding before the account is next lent.
 *
 * The timer runs in this process: rotation_period may be 5 s and the core's
 * periodic call comes once a minute.
 */
import { createRotationScheduler, createStaticRoleRotation, publishEvent, type KeyedMutex, type Logger, type RotationTarget, type StaticRoleRotation, type SystemView } from '@strongroom/sdk-plugin';
import { bindName, canBind, directoryError, type Directory } from './directory.js';
import type { LdapConfig, LdapStore, PasswordWal, StaticRole } from './store.js';

/** What the rotations need of the engine (engine.ts builds it and the rotations on it). */
export interface EngineBase {
  store: LdapStore;
  directory: Directory;
  system: SystemView;
  logger: Logger;
  /** Keys (the mount's uuid is added): `config` (config writes, rotate-root), `static/<name>`, `set/<name>`, `account/<name>`. */
  mutex: KeyedMutex;
  now: () => number;
  newPassword(cfg?: Readonly<LdapConfig>): Promise<string>;
}

type RotationScheduler = ReturnType<typeof createRotationScheduler>;

export interface Rotations {
  statics: StaticRoleRotation<StaticRole>;
  /** One name, `root`: the bind entry. Lock `config`, shared with configuration writes. */
  root: RotationScheduler;
  accounts: RotationScheduler;
  tick(): Promise<void>;
  start(): void;
  stop(): void;
}

export const ROOT = 'root';

export function createRotations(engine: EngineBase): Rotations {
  const { store } = engine;
  const setPassword = async (wal: PasswordWal) => {
    await engine.directory.setPassword(wal.dn, wal.password).catch((err: unknown) => {
      throw directoryError(`setting the password of ${wal.dn} failed`, err, [wal.password]);
    });
  };
  /** Which password the directory has for `dn`, told by binding. */
  const bound = async (dn: string, wal: PasswordWal, old: string): Promise<'applied' | 'not-applied'> => {
    const cfg = await store.config.get();
    if (!cfg) return 'not-applied';
    if (await canBind(cfg, dn, wal.password)) return 'applied';
    if (old && (await canBind(cfg, dn, old))) return 'not-applied';
    throw new Error(`neither the new nor the previous password of ${dn} binds`);
  };
  const opts = { now: engine.now, logger: engine.logger, mutex: engine.mutex };

  const statics = createStaticRoleRotation(
    store.staticRoles,
    (roleOf): Omit<RotationTarget<PasswordWal>, 'names' | 'nextDue' | 'period'> => ({
      wal: store.staticWals,
      async prepare(name) {
        const role = await roleOf(name);
        if (!role) throw new Error(`static role "${name}" does not exist`);
        return { dn: role.dn, password: await engine.newPassword(), started: engine.now() };
      },
      // An entry for another DN (the role was recreated) is not replayed.
      applies: async (name, wal) => (await roleOf(name))?.dn === wal.dn,
      apply: (_name, wal) => setPassword(wal),
      async commit(name, wal) {
        const role = await roleOf(name);
        if (!role) return [];
        const last = role.password === wal.password ? role.last_password : role.password;
        return [store.staticRoles.putOp(name, { ...role, password: wal.password, last_password: last, last_rotation: engine.now() })];
      },
    }),
    { ...opts, lockKey: (name) => `static/${name}`, onRotated: (name) => publishEvent(engine, 'ldap/static-rotate', `static-cred/${name}`, { role: name }) },
  );

  const rootTarget: RotationTarget<PasswordWal> = {
    wal: store.rootWals,
    names: async () => [],
    nextDue: async () => null,
    async prepare() {
      const cfg = await store.config.get();
      if (!cfg) throw new Error('the directory is not configured');
      return { dn: cfg.binddn, password: await engine.newPassword(cfg), started: engine.now() };
    },
    // The bind entry changes its own password over the connection bound with the old one.
    apply: (_name, wal) => setPassword(wal),
    async commit(_name, wal) {
      const cfg = await store.config.get();
      if (!cfg || cfg.binddn !== wal.dn) return [];
      return [store.config.putOp({ ...cfg, bindpass: wal.password, last_bind_password_rotation: wal.started })];
    },
    async settle(_name, wal) {
      const cfg = await store.config.get();
      if (!cfg || cfg.binddn !== wal.dn) return 'not-applied';
      return bound(bindName(cfg), wal, cfg.bindpass);
    },
  };
  const root = createRotationScheduler(rootTarget, { ...opts, lockKey: () => 'config' });

  const accountTarget: RotationTarget<PasswordWal> = {
    wal: store.accountWals,
    names: async () => [],
    nextDue: async () => null,
    async prepare(name) {
      const a = await store.accounts.get(name);
      if (!a) throw new Error(`library account "${name}" does not exist`);
      return { dn: a.dn, password: await engine.newPassword(), started: engine.now() };
    },
    applies: async (name, wal) => (await store.accounts.view(name))?.dn === wal.dn,
    apply: (_name, wal) => setPassword(wal),
    async commit(name, wal) {
      const a = await store.accounts.get(name);
      return a ? [store.accounts.putOp(name, { ...a, password: wal.password })] : [];
    },
    async settle(name, wal) {
      const a = await store.accounts.view(name);
      if (!a || a.dn !== wal.dn) return 'not-applied';
      return bound(a.dn, wal, a.password);
    },
  };
  const accounts = createRotationScheduler(accountTarget, { ...opts, lockKey: (name) => `account/${name}` });

  const all = [statics, root, accounts];
  return {
    statics,
    root,
    accounts,
    tick: async () => {
      for (const s of all) await s.tick();
    },
    start: () => all.forEach((s) => s.start()),
    stop: () => all.forEach((s) => s.stop()),
  };
}
