/**
 * `serve(factory)`: the entry point of a plugin process. It performs the
 * handshake with the core (see transport/handshake.ts), serves the Backend
 * service and the standard gRPC health service on a unix socket in the private
 * directory the core created, and builds one backend per mount on Setup.
 *
 * Invariants:
 *  - refuses to run without the magic cookie (a clear message, exit 1);
 *  - every call from the core must carry the per-process secret (constant-time
 *    check); the same secret authenticates this process's calls back;
 *  - never outlives the core: exits on SIGTERM/SIGINT, when stdin (a pipe from
 *    the core) closes, or when the parent process changes (the core died).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { Backend, BackendFactory } from './backend.js';
import type { MountInfo } from './logical.js';
import { StrongroomError } from './errors.js';
import { createCallbackClient, type CallbackClient } from './transport/callback-client.js';
import {
  decodeMount,
  decodeRequest,
  encodeDescription,
  encodeError,
  encodeExistence,
  encodeHandleReply,
  encodeSpecialPaths,
  type WireFrame,
  type WireMountInfo,
  type WireRequest,
} from './transport/codec.js';
import {
  APP_PROTOCOL_VERSION,
  ENV_CALLBACK,
  ENV_MAGIC_COOKIE,
  ENV_PROTOCOL_VERSIONS,
  ENV_SECRET,
  ENV_SOCKET_DIR,
  MAGIC_COOKIE_VALUE,
  PLUGIN_SOCKET_NAME,
  SECRET_METADATA_KEY,
  formatHandshakeLine,
  secretMatches,
} from './transport/handshake.js';
import { createStderrLogger, type JsonLogger } from './transport/logger.js';
import { serveFrames } from './transport/mux.js';
import { CHANNEL_OPTIONS, loadProtos } from './transport/proto.js';

export interface ServeHandle {
  socketPath: string;
  /** The process's client for calls back into the core (storage, system view) for any mount uuid. */
  callbacks: CallbackClient;
  logger: JsonLogger;
  /** Clean up every mount, stop serving and exit the process. */
  stop(code?: number): Promise<never>;
}

const PARENT_POLL_MS = 1000;
const CLEANUP_GRACE_MS = 2000;

function refuse(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

export async function serve(factory: BackendFactory): Promise<ServeHandle> {
  if (process.env[ENV_MAGIC_COOKIE] !== MAGIC_COOKIE_VALUE) {
    refuse(
      'This binary is a Strongroom plugin. It is not meant to be run directly: ' +
        'register it in the plugin catalog (sys/plugins/catalog) and mount it, and the server will start it.',
    );
  }
  const versions = (process.env[ENV_PROTOCOL_VERSIONS] ?? '').split(',').map((v) => v.trim());
  if (!versions.includes(String(APP_PROTOCOL_VERSION))) {
    refuse(`plugin speaks protocol ${APP_PROTOCOL_VERSION}; the server accepts ${versions.join(',') || 'none'}`);
  }
  const socketDir = process.env[ENV_SOCKET_DIR];
  const callbackPath = process.env[ENV_CALLBACK];
  const secretText = process.env[ENV_SECRET];
  if (!socketDir || !callbackPath || !secretText) refuse(`missing ${ENV_SOCKET_DIR}, ${ENV_CALLBACK} or ${ENV_SECRET}`);
  // The secret stays only in memory; nothing below may log or forward it.
  const secret = Buffer.from(secretText, 'utf8');
  delete process.env[ENV_SECRET];

  const logger = createStderrLogger();
  const callbacks = createCallbackClient({ socketPath: callbackPath, secret: secretText });
  const mounts = new Map<string, { mount: MountInfo; backend: Backend }>();

  const mountFor = (uuid: string) => {
    const m = mounts.get(uuid);
    if (!m) throw new StrongroomError('plugin_failed', `mount ${uuid} is not set up in this plugin process`);
    return m;
  };

  const setup = async (wireMount: WireMountInfo) => {
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

  const handleRequest = async (w: WireRequest) => {
    const m = mountFor(w.mount_uuid);
    try {
      return encodeHandleReply(await m.backend.handleRequest(decodeRequest(w, m.mount)));
    } catch (err) {
      logUnexpected(logger, err, m.mount.path);
      return { response: null, err: encodeError(err) };
    }
  };
  const existenceCheck = async (w: WireRequest) => {
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

  const authorized = (md: grpc.Metadata) => secretMatches(secret, md.get(SECRET_METADATA_KEY)[0]);
  type Call = { request: Record<string, unknown>; metadata: grpc.Metadata };
  const unary =
    (fn: (req: Record<string, unknown>) => Promise<unknown>) =>
    (call: Call, cb: grpc.sendUnaryData<unknown>) => {
      if (!authorized(call.metadata)) return cb({ code: grpc.status.UNAUTHENTICATED, details: 'core secret mismatch' });
      fn(call.request).then(
        (res) => cb(null, res),
        (err: unknown) => cb({ code: grpc.status.INTERNAL, details: err instanceof Error ? err.message : 'internal error' }),
      );
    };

  const protos = loadProtos();
  const server = new grpc.Server(CHANNEL_OPTIONS);
  server.addService(protos.Backend.service, {
    Setup: unary(async (req) => {
      try {
        const b = await setup(req.mount as WireMountInfo);
        return { special_paths: encodeSpecialPaths(b.specialPaths()), describe: encodeDescription(b.describe()), err: null };
      } catch (err) {
        logUnexpected(logger, err, (req.mount as WireMountInfo | null)?.path ?? '');
        return { special_paths: null, describe: null, err: encodeError(err) };
      }
    }),
    Describe: unary(async (req) => {
      try {
        return { describe: encodeDescription(mountFor(String(req.mount_uuid)).backend.describe()), err: null };
      } catch (err) {
        return { describe: null, err: encodeError(err) };
      }
    }),
    SpecialPaths: unary(async (req) => {
      try {
        return { special_paths: encodeSpecialPaths(mountFor(String(req.mount_uuid)).backend.specialPaths()), err: null };
      } catch (err) {
        return { special_paths: null, err: encodeError(err) };
      }
    }),
    HandleRequest: unary(async (req) => handleRequest(req as unknown as WireRequest)),
    HandleExistenceCheck: unary(async (req) => existenceCheck(req as unknown as WireRequest)),
    InvalidateKey: unary((req) => errorReply(() => mountFor(String(req.mount_uuid)).backend.invalidateKey(String(req.key)))),
    Periodic: unary((req) => errorReply(() => mountFor(String(req.mount_uuid)).backend.periodic())),
    Cleanup: unary((req) =>
      errorReply(async () => {
        const uuid = String(req.mount_uuid);
        const m = mounts.get(uuid);
        mounts.delete(uuid);
        if (m) await m.backend.cleanup();
      }),
    ),
    Type: unary(async () => ({ type: factory.type })),
    Stream: (call: grpc.ServerDuplexStream<WireFrame, WireFrame>) => {
      if (!authorized(call.metadata)) {
        // grpc-js ends a server stream with this status on an 'error' event.
      call.emit('error', { code: grpc.status.UNAUTHENTICATED, details: 'core secret mismatch' });
        return;
      }
      serveFrames(call, async (frame) => {
        switch (frame.kind) {
          case 'handle_request':
            return ['handle_request_reply', await handleRequest(frame.handle_request as WireRequest)];
          case 'existence_check':
            return ['existence_check_reply', await existenceCheck(frame.existence_check as WireRequest)];
          case 'invalidate_key': {
            const a = frame.invalidate_key as { mount_uuid: string; key: string };
            return ['invalidate_key_reply', await errorReply(() => mountFor(a.mount_uuid).backend.invalidateKey(a.key))];
          }
          case 'periodic': {
            const a = frame.periodic as { mount_uuid: string };
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
  const servingStatus = (service: unknown) => (service === '' || service === 'plugin' ? 'SERVING' : 'SERVICE_UNKNOWN');
  server.addService(protos.Health.service, {
    Check: (call: Call, cb: grpc.sendUnaryData<unknown>) => cb(null, { status: servingStatus(call.request.service) }),
    Watch: (call: grpc.ServerWritableStream<{ service: string }, unknown>) => {
      // Status never changes while the process lives; answer once and keep the stream open.
      call.write({ status: servingStatus(call.request.service) });
    },
  });

  const socketPath = path.join(socketDir, PLUGIN_SOCKET_NAME);
  fs.rmSync(socketPath, { force: true });
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix:${socketPath}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
  );

  let stopping: Promise<never> | null = null;
  const stop = (code = 0): Promise<never> => {
    if (stopping) return stopping;
    stopping = (async () => {
      const cleanups = [...mounts.values()].map((m) => m.backend.cleanup().catch(() => undefined));
      mounts.clear();
      await Promise.race([Promise.all(cleanups), new Promise((r) => setTimeout(r, CLEANUP_GRACE_MS).unref())]);
      server.forceShutdown();
      callbacks.close();
      fs.rmSync(socketPath, { force: true });
      process.exit(code);
    })();
    return stopping;
  };

  process.on('SIGTERM', () => void stop(0));
  process.on('SIGINT', () => void stop(0));
  // The core holds our stdin open; when it closes, the core is gone.
  process.stdin.on('end', () => void stop(0));
  process.stdin.on('close', () => void stop(0));
  process.stdin.on('error', () => void stop(0));
  process.stdin.resume();
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) void stop(0);
  }, PARENT_POLL_MS).unref();
  process.on('uncaughtException', (err) => {
    logger.error('uncaught exception', { error: err.message });
    process.exit(1);
  });

  process.stdout.write(formatHandshakeLine(socketPath) + '\n');
  return { socketPath, callbacks, logger, stop };
}

/** Unexpected (untyped) errors become "internal error" on the wire; keep their message in the plugin's log. */
function logUnexpected(logger: JsonLogger, err: unknown, mountPath: string): void {
  if (err instanceof StrongroomError) return;
  logger.error('unexpected error in backend', { mount: mountPath, error: err instanceof Error ? err.message : String(err) });
}
