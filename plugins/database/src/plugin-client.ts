/**
 * The SDK's database-plugin client (sdk-plugin/src/database/client.ts, built
 * by the plugin side of issue 7 at the same time as this engine). Looked up
 * at run time until it is on main, so the engine builds either way; a core
 * without it answers a clear error instead of a crash.
 */
import { StrongroomError, database } from '@strongroom/sdk-plugin';
import type { DatabaseClientFactory } from './connections.js';

interface SdkDatabaseClient {
  createDatabasePluginClient?: DatabaseClientFactory;
  isConnectionNotInitialized?: (err: unknown) => boolean;
}
const sdk = database as unknown as SdkDatabaseClient;

export const sdkClientFactory: DatabaseClientFactory = (address, id, opts) => {
  if (!sdk.createDatabasePluginClient) throw new StrongroomError('internal', 'this build has no database-plugin client');
  return sdk.createDatabasePluginClient(address, id, opts);
};

export const isConnectionNotInitialized = (err: unknown): boolean =>
  sdk.isConnectionNotInitialized
    ? sdk.isConnectionNotInitialized(err)
    : err instanceof StrongroomError && (err.code as string) === database.CONNECTION_NOT_INITIALIZED;
