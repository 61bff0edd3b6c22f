/**
 * rotate-root, crash-safe, on the SDK's rotation scheduler: the new root
 * password goes to a write-ahead entry (root-wal/<connection>, encrypted by
 * the barrier like the config) BEFORE the database is changed, and the entry
 * is deleted in the same batch that stores the config with the new password.
 * An entry found later means a rotation was cut short somewhere in between,
 * so nobody knows which password the database has: `settle` asks the
 * database, the new password first, then the stored one, and keeps whichever
 * logs in. Until then no use of the connection runs (connections.use waits
 * for `ready`), so a crash never leaves the engine knocking with a password
 * the database no longer takes.
 *
 * Every settle and rotation runs under the connection's lock `conn/<name>`
 * (`locked`), as config writes and reset do. The entry's password is never
 * returned: only rotation and settling read it.
 */
import { StrongroomError, badRequest, createRotationScheduler, notFound, type RotationTarget } from '@strongroom/sdk-plugin';
import { newPassword } from './credentials.js';
import type { EngineBase } from './engine-base.js';
import type { ConnectionConfig, RootRotationWal } from './store.js';

export interface RootRotation {
  /** Runs `fn` holding the connection's lock `conn/<name>`. */
  locked<R>(name: string, fn: () => Promise<R>): Promise<R>;
  /** Rotates the root password; call under `locked(name)`. */
  rotate(name: string): Promise<void>;
  /**
   * Settles an interrupted rotation of the connection, if any; call under
   * `locked(name)`. Returns which password the database took ("none" without
   * an entry); throws (keeping the entry) when neither logs in.
   */
  settle(name: string): Promise<'new' | 'old' | 'none'>;
  /** Drops an interrupted rotation without settling (a config write that sets the password, or a deleted connection); call under `locked(name)`. */
  discard(name: string): Promise<void>;
  /** Resolves once the connection was settled in this process (the first call settles, under the lock). */
  ready(name: string): Promise<void>;
}

const withPassword = (cfg: ConnectionConfig, password: string): ConnectionConfig => ({ ...cfg, connection_details: { ...cfg.connection_details, password } });

export function createRootRotation(deps: EngineBase): RootRotation {
  const { store, connections } = deps;
  /** Connections settled since this process started; an entry is dropped when a settle fails or a rotation leaves an entry behind. */
  const settled = new Map<string, Promise<void>>();
  /** The configuration the plugin answered for the new password, from `settle` to `commit`. */
  const answered = new Map<string, Record<string, unknown>>();

  const target: RotationTarget<RootRotationWal> = {
    wal: store.rootWals,
    names: async () => [],
    nextDue: async () => null, // on demand only
    async prepare(name) {
      const cfg = await store.configs.view(name);
      if (!cfg) throw notFound(`connection "${name}" does not exist`);
      const username = cfg.connection_details.username;
      if (typeof username !== 'string' || username === '') throw badRequest('username: the connection has no root username to rotate');
      return { connection: name, username, password: await newPassword(deps.system, cfg), started: deps.now() };
    },
    async apply(name, wal) {
      const cfg = await store.configs.view(name);
      if (!cfg) throw notFound(`connection "${name}" does not exist`);
      await connections.use(name, (client) =>
        client.updateUser({
          username: wal.username,
          credentialType: 'password',
          password: { newPassword: wal.password, statements: { commands: cfg.root_rotation_statements } },
        }),
      );
    },
    async commit(name, wal) {
      const cfg = await store.configs.get(name);
      if (!cfg) return [];
      const next = withPassword(cfg, wal.password);
      const details = answered.get(name);
      answered.delete(name);
      if (details) next.connection_details = details;
      return [store.configs.putOp(name, next)];
    },
    async settle(name, wal) {
      const cfg = await store.configs.get(name);
      // Gone, another root user configured since, or committed before the crash: nothing to decide.
      if (!cfg || cfg.connection_details.username !== wal.username || cfg.connection_details.password === wal.password) return 'not-applied';
      // The new password first: the entry exists because the database may have it.
      try {
        answered.set(name, await connections.configure(withPassword(cfg, wal.password), true));
        deps.logger.info('finished a root rotation that was cut short: the database has the new password', { connection: name });
        return 'applied';
      } catch {
        // Not accepted (or the database is away): try the stored one.
      }
      await connections.configure(cfg, true); // throws when neither logs in; the entry stays for the next try
      deps.logger.info('dropped a root rotation that was cut short: the database kept the old password', { connection: name });
      return 'not-applied';
    },
  };

  const scheduler = createRotationScheduler(target, { now: deps.now, logger: deps.logger, lockKey: (name) => `conn/${name}` });

  const settle: RootRotation['settle'] = async (name) => {
    const outcome = await scheduler.settle(name, { held: true });
    return outcome === 'applied' ? 'new' : outcome === 'not-applied' ? 'old' : 'none';
  };

  return {
    locked: scheduler.locked,
    settle,
    async rotate(name) {
      // The connection is used during the rotation, under this lock: it must not wait for a settle of its own.
      settled.set(name, Promise.resolve());
      try {
        await scheduler.rotate(name, { held: true });
      } catch (err) {
        if (await store.rootWals.get(name)) settled.delete(name); // still open: the next use settles it
        throw err;
      }
      // Reopen with the new password, and keep what the plugin answers for it.
      const cfg = await store.configs.get(name);
      if (!cfg) return;
      await connections.close(name);
      cfg.connection_details = await connections.configure(cfg, false);
      await store.configs.put(name, cfg);
    },
    async discard(name) {
      await scheduler.discard(name);
      settled.set(name, Promise.resolve());
    },
    ready(name) {
      let p = settled.get(name);
      if (!p) {
        p = scheduler.locked(name, () => settle(name)).then(
          () => undefined,
          (err: unknown) => {
            if (settled.get(name) === p) settled.delete(name);
            throw err instanceof StrongroomError ? err : new StrongroomError('unavailable', `connection "${name}": a cut-short root rotation could not be settled`);
          },
        );
        settled.set(name, p);
      }
      return p;
    },
  };
}
