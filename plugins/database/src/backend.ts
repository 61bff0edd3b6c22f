import { defineBackend, type BackendFactory } from '@strongroom/sdk-plugin';
import { createConnections, type DatabaseClientFactory } from './connections.js';
import type { EngineDeps } from './deps.js';
import { configPaths } from './paths/config.js';
import { credsPath, credsSecret } from './paths/creds.js';
import { rolePaths } from './paths/roles.js';
import { staticRolePaths } from './paths/static-roles.js';
import { createRootRotation } from './root-rotation.js';
import { createStaticRotation } from './static-rotation.js';
import { createPluginClients } from './plugin-clients.js';
import { createDatabaseStore } from './store.js';

export interface DatabaseBackendOptions {
  /** Test seam: a client that is no plugin at all. Default: the built-in in this process, any other version's process over its stream. */
  clientFactory?: DatabaseClientFactory;
  /** Injectable clock (unix ms) for TTL and rotation tests. */
  now?: () => number;
  /** Start the once-a-second rotation timer (default true; tests drive `periodic`/ticks themselves). */
  rotationTimer?: boolean;
}

/** The database secrets engine: connections, dynamic roles (leases) and static roles. */
export function createDatabaseBackend(opts: DatabaseBackendOptions = {}): BackendFactory {
  return defineBackend({
    type: 'secret',
    help: DATABASE_HELP,
    setup({ mount, storage, system, logger }) {
      const store = createDatabaseStore(storage);
      const now = opts.now ?? Date.now;
      const plugins = createPluginClients(logger);
      const connections = createConnections({
        mountUuid: mount.uuid,
        system,
        store,
        logger,
        clientFactory: opts.clientFactory ?? plugins.factory,
        ready: (name) => rootRotation.ready(name),
      });
      const base = { store, connections, system, logger, now };
      const rootRotation = createRootRotation(base);
      const rotation = createStaticRotation(base);
      const deps: EngineDeps = { ...base, rotation, rootRotation };
      if (opts.rotationTimer !== false) rotation.start();
      const secret = credsSecret(deps);
      return {
        paths: [...configPaths(deps), ...rolePaths(deps), credsPath(deps, secret), ...staticRolePaths(deps)],
        secrets: [secret],
        invalidate: (key) => store.records.invalidate(key),
        periodic: () => rotation.tick(),
        async cleanup() {
          rotation.stop();
          await connections.closeAll();
          await plugins.closeAll();
        },
      };
    },
  });
}

const DATABASE_HELP = `The database secrets engine creates database credentials on demand
(dynamic roles, returned as leases that are revoked when they expire) and
rotates the passwords of existing database users (static roles). Each
connection is served by a database plugin (postgresql-database-plugin,
mysql-database-plugin): the built-in version inside this engine, a version
pinned by plugin_version in a process of its own.`;

export const databaseBackend = createDatabaseBackend();
