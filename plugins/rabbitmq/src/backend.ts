import { defineBackend, type BackendFactory } from '@strongroom/sdk-plugin';
import { createClients, type ClientFactory, type EngineDeps } from './deps.js';
import { configPaths } from './paths/config.js';
import { credsPath, credsSecret } from './paths/creds.js';
import { rolePaths } from './paths/roles.js';
import { createRabbitmqStore } from './store.js';

export interface RabbitmqBackendOptions {
  /** Test seam: a management client that is not HTTP. Default: the real client. */
  clientFactory?: ClientFactory;
  /** Injectable clock (unix ms) for renewal tests. */
  now?: () => number;
}

/** The message-broker (RabbitMQ) secrets engine: users created on demand through the management API, as leases. */
export function createRabbitmqBackend(opts: RabbitmqBackendOptions = {}): BackendFactory {
  return defineBackend({
    type: 'secret',
    help: RABBITMQ_HELP,
    setup({ storage, system, logger }) {
      const store = createRabbitmqStore(storage);
      const clients = createClients(store, opts.clientFactory);
      const deps: EngineDeps = { store, system, logger, now: opts.now ?? Date.now, clients };
      const secret = credsSecret(deps);
      return {
        paths: [...configPaths(deps), ...rolePaths(deps), credsPath(deps, secret)],
        secrets: [secret],
        invalidate: (key) => store.records.invalidate(key),
      };
    },
  });
}

const RABBITMQ_HELP = `The RabbitMQ secrets engine creates RabbitMQ users on demand through the
broker's management HTTP API: each creds/<role> request makes a user with the
role's management tags, vhost permissions and topic permissions, returned as a
renewable lease; revoking the lease deletes the user.`;

export const rabbitmqBackend = createRabbitmqBackend();
