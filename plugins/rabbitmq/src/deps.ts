import { badRequest, type CompiledTemplate, compileTemplate, type Logger, type SystemView } from '@strongroom/sdk-plugin';
import { createManagementClient, type ManagementClient, type ManagementConnection } from './management-client.js';
import type { ConnectionConfig, RabbitmqStore } from './store.js';

/** Builds a management client; a test seam (the default is the real HTTP client). */
export type ClientFactory = (conn: ManagementConnection) => ManagementClient;

/** What the paths of one mount share. */
export interface EngineDeps {
  store: RabbitmqStore;
  system: SystemView;
  logger: Logger;
  now: () => number;
  clients: Clients;
}

/** Vault's default: the requester's display name and a UUID. */
const DEFAULT_USERNAME_TEMPLATE = '{{ printf "%s-%s" (.DisplayName) (uuid) }}';

/** The configured connection with what is built from it once: its management client and compiled username template. */
export interface Connection {
  client: ManagementClient;
  config: Readonly<ConnectionConfig>;
  usernames: CompiledTemplate;
}

/** The mount's connection, built once from the stored config and rebuilt when it changes. */
export interface Clients {
  /** The configured connection; a 400 when none is configured. */
  current(): Promise<Connection>;
  /** A client for a connection not stored yet (verify_connection). */
  forConfig(config: Readonly<ConnectionConfig>): ManagementClient;
}

export function createClients(store: RabbitmqStore, factory: ClientFactory = createManagementClient): Clients {
  const forConfig = (c: Readonly<ConnectionConfig>) => factory({ uri: c.connection_uri, username: c.username, password: c.password });
  // Built once per cached config record: a write or the core's invalidation replaces the record, and so the client.
  const connect = store.connection.memo(
    (config): Connection => ({ client: forConfig(config), config, usernames: compileTemplate(config.username_template || DEFAULT_USERNAME_TEMPLATE, { field: 'username_template' }) }),
  );
  return {
    async current() {
      const config = await store.connection.view();
      if (!config) throw badRequest('the RabbitMQ connection is not configured: write config/connection first');
      return connect(config);
    },
    forConfig,
  };
}
