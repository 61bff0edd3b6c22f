/**
 * rotate-root, crash-safe. The new root password is written to a WAL entry
 * (root-wal/<connection>, encrypted by the barrier like the config) BEFORE
 * the database is changed, and the entry is deleted only once the config
 * holds the new password. A WAL entry found later means a rotation was cut
 * short somewhere in between, so nobody knows which password the database
 * has: `settle` asks the database, the new password first, then the stored
 * one, and keeps whichever logs in. Until then no use of the connection runs
 * (connections.use waits for `ready`), so a crash never leaves the engine
 * knocking with a password the database no longer takes.
 *
 * Every settle and rotation runs under the connection's lock `conn/<name>`,
 * as config writes and reset do. The WAL's password is never returned: only
 * rotation and settling read the entry.
 */
import { StrongroomError, badRequest, notFound } from '@strongroom/sdk-plugin';
import { newPassword } from './credentials.js';
import type { EngineDeps } from './deps.js';
import type { ConnectionConfig } from './store.js';

export interface RootRotation {
  /** Rotates the root password; call under `conn/<name>`. */
  rotate(name: string): Promise<void>;
  /**
   * Settles an interrupted rotation of the connection, if any; call under
   * `conn/<name>`. Returns which password the database took ("none" without a
   * WAL entry); throws (keeping the entry) when neither logs in.
   */
  settle(name: string): Promise<'new' | 'old' | 'none'>;
  /** Drops an interrupted rotation without settling (a config write that sets the password, or a deleted connection); call under `conn/<name>`. */
  discard(name: string): Promise<void>;
  /** Resolves once the connection was settled in this process (the first call settles, under the lock). */
  ready(name: string): Promise<void>;
}

type Deps = Pick<EngineDeps, 'store' | 'connections' | 'system' | 'logger' | 'mutex' | 'now'>;

export function createRootRotation(deps: Deps): RootRotation {
  const { store, connections } = deps;
  /** Connections settled since this process started; an entry is dropped when a settle fails or a rotation leaves a WAL behind. */
  const settled = new Map<string, Promise<void>>();

  const withPassword = (cfg: ConnectionConfig, password: string): ConnectionConfig => ({ ...cfg, connection_details: { ...cfg.connection_details, password } });

  /** The database has `password`: store it, then forget the WAL, then reopen the connection with it. */
  const commit = async (next: ConnectionConfig) => {
    await store.putConfig(next);
    await store.deleteRootWal(next.name);
    await connections.close(next.name);
    next.connection_details = await connections.configure(next, false);
    await store.putConfig(next);
  };

  const settle: RootRotation['settle'] = async (name) => {
    const wal = await store.getRootWal(name);
    if (!wal) return 'none';
    const cfg = await store.getConfig(name);
    if (!cfg || cfg.connection_details.username !== wal.username || cfg.connection_details.password === wal.password) {
      // Gone, another root user configured since, or committed before the crash: nothing to decide.
      await store.deleteRootWal(name);
      return 'none';
    }
    // The new password first: the WAL exists because the database may have it.
    const next = withPassword(cfg, wal.password);
    try {
      next.connection_details = await connections.configure(next, true);
      await store.putConfig(next);
      await store.deleteRootWal(name);
      deps.logger.info('finished a root rotation that was cut short: the database has the new password', { connection: name });
      return 'new';
    } catch {
      // Not accepted (or the database is away): try the stored one.
    }
    await connections.configure(cfg, true); // throws when neither logs in; the WAL stays for the next try
    await store.deleteRootWal(name);
    deps.logger.info('dropped a root rotation that was cut short: the database kept the old password', { connection: name });
    return 'old';
  };

  const rotate: RootRotation['rotate'] = async (name) => {
    // An earlier interrupted rotation first: its password may be the one that works.
    await settle(name);
    settled.set(name, Promise.resolve());
    const cfg = await store.getConfig(name);
    if (!cfg) throw notFound(`connection "${name}" does not exist`);
    const username = cfg.connection_details.username;
    if (typeof username !== 'string' || username === '') throw badRequest('username: the connection has no root username to rotate');
    const password = await newPassword(deps.system, cfg);
    await store.putRootWal({ connection: name, username, password, started: deps.now() });
    try {
      await connections.use(name, (client) =>
        client.updateUser({
          username,
          credentialType: 'password',
          password: { newPassword: password, statements: { commands: cfg.root_rotation_statements } },
        }),
      );
    } catch (err) {
      // The change may have happened all the same (a reply lost): the database says which password it has.
      const outcome = await settle(name).catch(() => {
        settled.delete(name); // still open: the next use settles it
        return 'unknown' as const;
      });
      if (outcome === 'new') return;
      throw err;
    }
    await commit(withPassword(cfg, password));
  };

  return {
    rotate,
    settle,
    async discard(name) {
      await store.deleteRootWal(name);
      settled.set(name, Promise.resolve());
    },
    ready(name) {
      let p = settled.get(name);
      if (!p) {
        p = deps.mutex.run(`conn/${name}`, () => settle(name)).then(
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
