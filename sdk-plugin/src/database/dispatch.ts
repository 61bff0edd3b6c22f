/**
 * The plugin's side of the Database contract, whoever carries the frames: one
 * `DatabaseInstance` per connection id, and each request frame of
 * proto/database.proto answered as its reply member. A plugin process serves
 * it on its stream (serve-database.ts); the database engine calls it directly
 * for the built-in plugins it runs in its own process (in-process.ts).
 *
 * Invariants:
 *  - a call for a connection id not initialized here fails with
 *    `connection_not_initialized` (the engine re-initializes and retries);
 *  - an untyped error (a driver's, whose text may hold credentials) is logged
 *    by class and driver code only; the caller encodes it as a bare
 *    "internal error" (transport/codec.ts encodeError).
 */
import { StrongroomError, badRequest } from '../errors.js';
import type { WireFrame } from '../transport/codec.js';
import {
  decodeDeleteUserRequest,
  decodeInitializeRequest,
  decodeNewUserRequest,
  decodeUpdateUserRequest,
  encodeConfig,
} from './codec.js';
import { CONNECTION_NOT_INITIALIZED, type DatabaseInstance, type DatabasePlugin } from './types.js';
import type * as wire from '../transport/wire.js';

export interface DatabaseDispatcher {
  /** Answers one request frame: the reply member's name and message. Rejects with the call's error. */
  handle(frame: WireFrame): Promise<[string, unknown]>;
  /** Closes every connection's instance (the process or the mount is going). */
  closeAll(): Promise<void>;
}

export function createDatabaseDispatcher(
  plugin: DatabasePlugin,
  logger: { error(msg: string, meta?: Record<string, unknown>): void },
): DatabaseDispatcher {
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

  return {
    // `handle` is async: a plugin method that throws synchronously still becomes this call's rejection.
    handle: (frame) =>
      handle(frame).catch((err: unknown) => {
        logUnexpected(String(frame.kind), err);
        throw err;
      }),
    async closeAll() {
      const all = [...instances.values()];
      instances.clear();
      await Promise.all(all.map((i) => i.close().catch(() => undefined)));
    },
  };
}
