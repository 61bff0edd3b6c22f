/**
 * `serveDatabasePlugin(plugin)`: the entry point of a database plugin process
 * (postgresql-database-plugin, mysql-database-plugin). Same process contract
 * as backend plugins (transport/plugin-process.ts); serves the `Database`
 * service's multiplexed stream and keeps one `DatabaseInstance` per
 * connection id a frame names.
 *
 * Invariants:
 *  - a call for a connection id this process has not initialized fails with
 *    `connection_not_initialized` (the engine re-initializes and retries);
 *  - untyped errors cross as a bare "internal error" and are logged by class
 *    and driver code only: their text may hold credentials.
 */
import * as grpc from '@grpc/grpc-js';
import { StrongroomError, badRequest } from '../errors.js';
import type { WireFrame } from '../transport/codec.js';
import type { JsonLogger } from '../transport/logger.js';
import { serveFrames } from '../transport/mux.js';
import { startPluginProcess } from '../transport/plugin-process.js';
import {
  decodeDeleteUserRequest,
  decodeInitializeRequest,
  decodeNewUserRequest,
  decodeUpdateUserRequest,
  encodeConfig,
} from './codec.js';
import { CONNECTION_NOT_INITIALIZED, type DatabaseInstance, type DatabasePlugin } from './types.js';
import type * as wire from '../transport/wire.js';

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
  const instances = new Map<string, DatabaseInstance>();

  const instanceFor = (id: string): DatabaseInstance => {
    const inst = instances.get(id);
    if (!inst) throw new StrongroomError(CONNECTION_NOT_INITIALIZED, `connection ${id} is not initialized in this plugin process`);
    return inst;
  };
  const logUnexpected = (op: string, err: unknown) => {
    if (err instanceof StrongroomError) return;
    const e = err as { name?: unknown; code?: unknown } | null;
    logger.error('unexpected error in database plugin', { op, error: String(e?.name ?? typeof err), code: String(e?.code ?? '') });
  };

  /** One call of the stream: the reply kind and body; a failure becomes the frame's typed `error`. */
  const handle = async (frame: WireFrame): Promise<[string, unknown]> => {
    const id = typeof frame.connection_id === 'string' ? frame.connection_id : '';
    if (!id) throw badRequest('connection_id: required on every call');
    switch (frame.kind) {
      case 'initialize': {
        const fresh = plugin.newInstance();
        let res;
        try {
          res = await fresh.initialize(decodeInitializeRequest(frame.initialize as wire.InitializeRequest));
        } catch (err) {
          await fresh.close().catch(() => undefined);
          throw err;
        }
        const previous = instances.get(id);
        instances.set(id, fresh);
        if (previous) await previous.close().catch((err: unknown) => logUnexpected('close', err));
        return ['initialize_reply', { config_json: encodeConfig(res.config) }];
      }
      case 'new_user': {
        const r = await instanceFor(id).newUser(decodeNewUserRequest(frame.new_user as wire.NewUserRequest));
        return ['new_user_reply', { username: r.username }];
      }
      case 'update_user':
        await instanceFor(id).updateUser(decodeUpdateUserRequest(frame.update_user as wire.UpdateUserRequest));
        return ['update_user_reply', {}];
      case 'delete_user':
        await instanceFor(id).deleteUser(decodeDeleteUserRequest(frame.delete_user as wire.DeleteUserRequest));
        return ['delete_user_reply', {}];
      case 'close': {
        // Idempotent: closing an unknown connection is not an error.
        const inst = instances.get(id);
        instances.delete(id);
        if (inst) await inst.close().catch((err: unknown) => logUnexpected('close', err));
        return ['close_reply', {}];
      }
      default:
        throw new StrongroomError('unsupported_operation', `unknown frame kind ${String(frame.kind)}`);
    }
  };

  proc.server.addService(proc.protos.Database.service, {
    Type: proc.unary(async () => ({ type: plugin.type })),
    Stream: (call: grpc.ServerDuplexStream<WireFrame, WireFrame>) => {
      if (!proc.authorized(call.metadata)) {
        call.emit('error', { code: grpc.status.UNAUTHENTICATED, details: 'core secret mismatch' });
        return;
      }
      serveFrames(call, (frame) =>
        handle(frame).catch((err: unknown) => {
          logUnexpected(String(frame.kind), err);
          throw err;
        }),
      );
      call.on('end', () => call.end());
      call.on('error', () => undefined);
    },
  });

  const closeAll = async () => {
    const all = [...instances.values()];
    instances.clear();
    await Promise.all(all.map((i) => i.close().catch(() => undefined)));
  };
  const { socketPath, stop } = await proc.listen(closeAll);
  return { socketPath, logger, stop };
}
