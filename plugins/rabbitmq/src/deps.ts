import { badRequest, type KeyedMutex, type Logger, type SystemView } from '@strongroom/sdk-plugin';
import { createManagementClient, type ManagementClient, type ManagementConnection } from './management-client.js';
import type { ConnectionConfig, RabbitmqStore } from './store.js';

/** Builds a management client; a test seam (the default is the real HTTP client). */
export type ClientFactory = (conn: ManagementConnection) => ManagementClient;

/** What the paths of one mount share. */
export interface EngineDeps {
  store: RabbitmqStore;
  system: SystemView;
  logger: Logger;
  /** Key `config`: connection writes. */
  mutex: KeyedMutex;
  now: () => number;
  clients: Clients;
}

/** The mount's management client, built once from the stored connection and rebuilt when it changes. */
export interface Clients {
  /** The client of the configured connection; a 400 when none is configured. */
  current(): Promise<{ client: ManagementClient; config: ConnectionConfig }>;
  /** A client for a connection not stored yet (verify_connection). */
  forConfig(config: ConnectionConfig): ManagementClient;
  /** The stored connection changed: the next use builds a new client. */
  reset(): void;
}

export function createClients(store: RabbitmqStore, factory: ClientFactory = createManagementClient): Clients {
  let cached: { client: ManagementClient; config: ConnectionConfig } | null = null;
  const forConfig = (c: ConnectionConfig) => factory({ uri: c.connection_uri, username: c.username, password: c.password });
  return {
    async current() {
      const config = await store.getConnection();
      if (!config) throw badRequest('the RabbitMQ connection is not configured: write config/connection first');
      // The store hands out the same frozen object until the entry changes: identity says whether the client still fits.
      if (cached?.config !== config) cached = { client: forConfig(config), config };
      return cached;
    },
    forConfig,
    reset() {
      cached = null;
    },
  };
}
