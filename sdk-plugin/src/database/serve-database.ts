/**
 * `serveDatabasePlugin(plugin)`: the entry point of a database plugin process
 * (an external version of postgresql-database-plugin, mysql-database-plugin or
 * any other). Same process contract as backend plugins
 * (transport/plugin-process.ts); serves the `Database` service's multiplexed
 * stream, each frame answered by the dispatcher (dispatch.ts: one
 * `DatabaseInstance` per connection id, and what stays true of errors).
 */
import * as grpc from '@grpc/grpc-js';
import type { WireFrame } from '../transport/codec.js';
import type { JsonLogger } from '../transport/logger.js';
import { serveFrames } from '../transport/mux.js';
import { startPluginProcess } from '../transport/plugin-process.js';
import { createDatabaseDispatcher } from './dispatch.js';
import type { DatabasePlugin } from './types.js';

export interface DatabaseServeHandle {
  socketPath: string;
  logger: JsonLogger;
  /** Close every connection's instance, stop serving and exit the process. */
  stop(code?: number): Promise<never>;
}

export async function serveDatabasePlugin(plugin: DatabasePlugin): Promise<DatabaseServeHandle> {
  // The core's callback socket is optional here: a database plugin needs no storage.
  const proc = startPluginProcess({ requireCallback: false, redactUncaught: true });
  const { logger } = proc;
  const dispatcher = createDatabaseDispatcher(plugin, logger);

  proc.server.addService(proc.protos.Database.service, {
    Type: proc.unary(async () => ({ type: plugin.type })),
    Stream: (call: grpc.ServerDuplexStream<WireFrame, WireFrame>) => {
      if (!proc.authorized(call.metadata)) {
        call.emit('error', { code: grpc.status.UNAUTHENTICATED, details: 'core secret mismatch' });
        return;
      }
      serveFrames(call, dispatcher.handle);
      call.on('end', () => call.end());
      call.on('error', () => undefined);
    },
  });

  const { socketPath, stop } = await proc.listen(() => dispatcher.closeAll());
  return { socketPath, logger, stop };
}
