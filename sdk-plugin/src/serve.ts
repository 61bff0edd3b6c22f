/**
 * `serve(factory)`: the entry point of a backend plugin process. The process
 * contract (magic cookie, per-process secret on every call, health service,
 * handshake line, exit with the core) lives in transport/plugin-process.ts;
 * this file serves the Backend service on top of it and builds one backend per
 * mount on Setup. The same secret authenticates this process's calls back.
 */
import * as grpc from '@grpc/grpc-js';
import type { Backend, BackendFactory } from './backend.js';
import { writeOperation, type MountInfo } from './logical.js';
import { StrongroomError } from './errors.js';
import { createCallbackClient, type CallbackClient } from './transport/callback-client.js';
import {
  decodeMount,
  decodeMountTtls,
  decodeRequest,
  encodeDescription,
  encodeError,
  encodeExistence,
  encodeHandleReply,
  encodeSpecialPaths,
  type WireFrame,
} from './transport/codec.js';
import type { JsonLogger } from './transport/logger.js';
import { serveFrames } from './transport/mux.js';
import { startPluginProcess } from './transport/plugin-process.js';
import type * as wire from './transport/wire.js';

const NO_BYTES = new Uint8Array(0);

export interface ServeHandle {
  socketPath: string;
  /** The process's client for calls back into the core (storage, system view) for any mount uuid. */
  callbacks: CallbackClient;
  logger: JsonLogger;
  /** Clean up every mount, stop serving and exit the process. */
  stop(code?: number): Promise<never>;
}

export interface ServeOptions {
  /** Log an uncaught exception by class and code only: set by an engine that runs database drivers in its process. */
  redactUncaught?: boolean;
}

export async function serve(factory: BackendFactory, opts: ServeOptions = {}): Promise<ServeHandle> {
  const proc = startPluginProcess({ requireCallback: true, redactUncaught: opts.redactUncaught ?? false });
  const { logger, server, unary, authorized } = proc;
  const callbacks = createCallbackClient({ socketPath: proc.callbackPath ?? '', secret: proc.secretText });
  const mounts = new Map<string, { mount: MountInfo; backend: Backend }>();

  const mountFor = (uuid: string) => {
    const m = mounts.get(uuid);
    if (!m) throw new StrongroomError('plugin_failed', `mount ${uuid} is not set up in this plugin process`);
    return m;
  };

  const setup = async (wireMount: wire.MountInfo) => {
    const mount = decodeMount(wireMount);
    const previous = mounts.get(mount.uuid);
    if (previous) {
      mounts.delete(mount.uuid);
      await previous.backend.cleanup().catch(() => undefined);
    }
    const backend = await factory.create({
      mount,
      storage: callbacks.storage(mount.uuid),
      system: callbacks.system(mount.uuid),
      logger: logger.child({ mount: mount.path }),
    });
    mounts.set(mount.uuid, { mount, backend });
    return backend;
  };

  const handleRequest = async (w: wire.Request) => {
    const m = mountFor(w.mount_uuid);
    const ttls = decodeMountTtls(w);
    if (ttls) callbacks.noteMountTtls(w.mount_uuid, ttls);
    try {
      const req = decodeRequest(w, m.mount);
      // The frame is held until its reply; its JSON bytes (a view of the whole received message) are not needed past here (issue 31).
      w.data_json = NO_BYTES;
      if (req.resolveExistence) {
        // The core left create-or-update to us (its ACL allows both alike): the local check decides.
        req.operation = writeOperation(await m.backend.existenceCheck(req));
        delete req.resolveExistence;
      }
      return encodeHandleReply(await m.backend.handleRequest(req));
    } catch (err) {
      logUnexpected(logger, err, m.mount.path);
      return { response: null, err: encodeError(err) };
    }
  };
  const existenceCheck = async (w: wire.Request) => {
    const m = mountFor(w.mount_uuid);
    try {
      return encodeExistence(await m.backend.existenceCheck(decodeRequest(w, m.mount)));
    } catch (err) {
      logUnexpected(logger, err, m.mount.path);
      return { check_found: false, exists: false, err: encodeError(err) };
    }
  };
  const errorReply = async (fn: () => Promise<void>) => {
    try {
      await fn();
      return { err: null };
    } catch (err) {
      return { err: encodeError(err) };
    }
  };

  server.addService(proc.protos.Backend.service, {
    Setup: unary(async (req) => {
      try {
        const b = await setup(req.mount as wire.MountInfo);
        return { special_paths: encodeSpecialPaths(b.specialPaths()), describe: encodeDescription(b.describe()), err: null };
      } catch (err) {
        logUnexpected(logger, err, (req.mount as wire.MountInfo | null)?.path ?? '');
        return { special_paths: null, describe: null, err: encodeError(err) };
      }
    }),
    Cleanup: unary((req) =>
      errorReply(async () => {
        const uuid = String(req.mount_uuid);
        const m = mounts.get(uuid);
        mounts.delete(uuid);
        callbacks.forgetMount(uuid);
        if (m) await m.backend.cleanup();
      }),
    ),
    Stream: (call: grpc.ServerDuplexStream<WireFrame, WireFrame>) => {
      if (!authorized(call.metadata)) {
        // grpc-js ends a server stream with this status on an 'error' event.
      call.emit('error', { code: grpc.status.UNAUTHENTICATED, details: 'core secret mismatch' });
        return;
      }
      serveFrames(call, async (frame) => {
        switch (frame.kind) {
          case 'handle_request':
            return ['handle_request_reply', await handleRequest(frame.handle_request as wire.Request)];
          case 'existence_check':
            return ['existence_check_reply', await existenceCheck(frame.existence_check as wire.Request)];
          case 'invalidate_key': {
            const a = frame.invalidate_key as wire.InvalidateKeyArgs;
            return ['invalidate_key_reply', await errorReply(() => mountFor(a.mount_uuid).backend.invalidateKey(a.key))];
          }
          case 'periodic': {
            const a = frame.periodic as wire.MountRef;
            return ['periodic_reply', await errorReply(() => mountFor(a.mount_uuid).backend.periodic())];
          }
          default:
            throw new StrongroomError('unsupported_operation', `unknown frame kind ${String(frame.kind)}`);
        }
      });
      call.on('end', () => call.end());
      call.on('error', () => undefined);
    },
  });
  const cleanupAll = async () => {
    const cleanups = [...mounts.values()].map((m) => m.backend.cleanup().catch(() => undefined));
    mounts.clear();
    await Promise.all(cleanups);
    callbacks.close();
  };
  const { socketPath, stop } = await proc.listen(cleanupAll);
  return { socketPath, callbacks, logger, stop };
}

/** Unexpected (untyped) errors become "internal error" on the wire; keep their message in the plugin's log. */
function logUnexpected(logger: JsonLogger, err: unknown, mountPath: string): void {
  if (err instanceof StrongroomError) return;
  logger.error('unexpected error in backend', { mount: mountPath, error: err instanceof Error ? err.message : String(err) });
}
