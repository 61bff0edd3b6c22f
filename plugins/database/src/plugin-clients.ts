/**
 * Where a connection's database plugin runs. The built-in version runs here,
 * in this engine's process (DESIGN §3, "Built-in database plugins"): the core
 * resolves the connection's plugin_version and, for the built-in, answers
 * `builtin` and starts nothing. A registered (external) version stays a
 * sandboxed, sha256-checked process of its own, reached over its stream.
 * Both go through the SDK's one client (createDatabaseClient) with the same
 * messages, so nothing above this file can tell them apart.
 *
 * A built-in's code and its driver load on the first connection that uses
 * it, never at start: an idle engine runs neither.
 */
import { type Logger, StrongroomError } from '@strongroom/sdk-plugin';
import * as database from '@strongroom/sdk-plugin/database';
import type { DatabaseClientFactory } from './connections.js';

/**
 * The built-ins by catalog name: each package's `strongroom.name`, which the
 * core lists as `v0.1.0+builtin` (test/database/plugin-placement.test.ts
 * configures both by that name).
 */
const BUILTIN_DATABASE_PLUGINS: Readonly<Record<string, () => Promise<database.DatabasePlugin>>> = {
  'postgresql-database-plugin': async () => (await import('@strongroom/plugin-database-postgresql')).postgresqlPlugin,
  'mysql-database-plugin': async () => (await import('@strongroom/plugin-database-mysql')).mysqlPlugin,
};

export interface PluginClients {
  factory: DatabaseClientFactory;
  /** Closes every connection the built-ins hold for this mount. */
  closeAll(): Promise<void>;
}

/** One mount's clients: its connections on the built-ins live in this mount's transports. */
export function createPluginClients(logger: Pick<Logger, 'error'>): PluginClients {
  const transports = new Map<string, Promise<database.InProcessDatabaseTransport>>();

  const builtin = (plugin: string, label: string): Promise<database.InProcessDatabaseTransport> => {
    let t = transports.get(plugin);
    if (!t) {
      const load = BUILTIN_DATABASE_PLUGINS[plugin];
      if (!load) return Promise.reject(new StrongroomError('plugin_failed', `${plugin} is not built into this database engine`));
      t = load().then((p) => database.createInProcessDatabaseTransport(p, { label, logger }));
      // A failed load is not remembered: the next connection tries again.
      t.catch(() => transports.delete(plugin));
      transports.set(plugin, t);
    }
    return t;
  };

  return {
    factory: async (address, connectionId, opts) =>
      address.builtin
        ? database.createDatabaseClient(await builtin(opts.plugin, opts.label), connectionId, opts)
        : database.createDatabasePluginClient(address, connectionId, opts),
    async closeAll() {
      const all = await Promise.allSettled(transports.values());
      await Promise.all(all.map((t) => (t.status === 'fulfilled' ? t.value.closeAll() : undefined)));
    },
  };
}
