/**
 * `serveDatabasePlugin(plugin)`: the entry point of a database plugin process
 * (postgresql-database-plugin, mysql-database-plugin). Same process contract
 * as backend plugins (transport/plugin-process.ts); serves the `Database`
 * service and keeps one `DatabaseInstance` per `x-strongroom-connection-id`.
 *
 * Invariants:
 *  - a call for a connection id this process has not initialized fails with
 *    `connection_not_initialized` (the engine re-initializes and retries);
 *  - untyped errors cross as a bare "internal error" and are logged by class
 *    and driver code only: their text may hold credentials.
 */
import type * as grpc from '@grpc/grpc-js';
import { StrongroomError, badRequest } from '../errors.js';
import { encodeError } from '../transport/codec.js';
import type { JsonLogger } from '../transport/logger.js';
import { startPluginProcess } from '../transport/plugin-process.js';
import {
  decodeDeleteUserRequest,
  decodeInitializeRequest,
  decodeNewUserRequest,
  decodeUpdateUserRequest,
  encodeConfig,
} from './codec.js';
import { CONNECTION_ID_METADATA_KEY, type DatabaseInstance, type DatabasePlugin } from './types.js';
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

  const connectionId = (md: grpc.Metadata): string => {
    const id = md.get(CONNECTION_ID_METADATA_KEY)[0];
    const text = typeof id === 'string' ? id : Buffer.isBuffer(id) ? id.toString('utf8') : '';
    if (!text) throw badRequest(`missing ${CONNECTION_ID_METADATA_KEY} metadata`);
    return text;
  };
  const instanceFor = (md: grpc.Metadata): DatabaseInstance => {
    const id = connectionId(md);
    const inst = instances.get(id);
    if (!inst) throw new StrongroomError('connection_not_initialized', `connection ${id} is not initialized in this plugin process`);
    return inst;
  };
  const logUnexpected = (op: string, err: unknown) => {
    if (err instanceof StrongroomError) return;
    const e = err as { name?: unknown; code?: unknown } | null;
    logger.error('unexpected error in database plugin', { op, error: String(e?.name ?? typeof err), code: String(e?.code ?? '') });
  };
  // Each RPC answers its typed error in the reply's `err` field.
  const typed =
    <T extends object>(op: string, empty: T, fn: (req: Record<string, unknown>, md: grpc.Metadata) => Promise<T>) =>
    (req: Record<string, unknown>, md: grpc.Metadata) =>
      fn(req, md).catch((err: unknown) => {
        logUnexpected(op, err);
        return { ...empty, err: encodeError(err) };
      });

  proc.server.addService(proc.protos.Database.service, {
    Initialize: proc.unary(
      typed('initialize', { config_json: Buffer.alloc(0), err: null }, async (req, md) => {
        const id = connectionId(md);
        const fresh = plugin.newInstance();
        let res;
        try {
          res = await fresh.initialize(decodeInitializeRequest(req as unknown as wire.InitializeRequest));
        } catch (err) {
          await fresh.close().catch(() => undefined);
          throw err;
        }
        const previous = instances.get(id);
        instances.set(id, fresh);
        if (previous) await previous.close().catch((err: unknown) => logUnexpected('close', err));
        return { config_json: encodeConfig(res.config), err: null };
      }),
    ),
    NewUser: proc.unary(
      typed('new_user', { username: '', err: null }, async (req, md) => {
        const inst = instanceFor(md);
        const r = await inst.newUser(decodeNewUserRequest(req as unknown as wire.NewUserRequest));
        return { username: r.username, err: null };
      }),
    ),
    UpdateUser: proc.unary(
      typed('update_user', { err: null }, async (req, md) => {
        const inst = instanceFor(md);
        await inst.updateUser(decodeUpdateUserRequest(req as unknown as wire.UpdateUserRequest));
        return { err: null };
      }),
    ),
    DeleteUser: proc.unary(
      typed('delete_user', { err: null }, async (req, md) => {
        const inst = instanceFor(md);
        await inst.deleteUser(decodeDeleteUserRequest(req as unknown as wire.DeleteUserRequest));
        return { err: null };
      }),
    ),
    Type: proc.unary(async () => ({ type: plugin.type })),
    // Close is idempotent: closing an unknown connection is not an error.
    Close: proc.unary(async (_req, md) => {
      const id = connectionId(md);
      const inst = instances.get(id);
      instances.delete(id);
      if (inst) await inst.close().catch((err: unknown) => logUnexpected('close', err));
      return {};
    }),
  });

  const closeAll = async () => {
    const all = [...instances.values()];
    instances.clear();
    await Promise.all(all.map((i) => i.close().catch(() => undefined)));
  };
  const { socketPath, stop } = await proc.listen(closeAll);
  return { socketPath, logger, stop };
}
