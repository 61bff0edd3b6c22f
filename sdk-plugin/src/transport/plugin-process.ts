/**
 * The process side of the plugin contract, shared by every kind of plugin
 * process (backend plugins via serve.ts, database plugins via
 * database/serve-database.ts): environment checks, a gRPC server on a unix
 * socket in the core's private directory, the standard health service, the
 * one handshake line on stdout, and the process's lifetime.
 *
 * Invariants:
 *  - refuses to run without the magic cookie (a clear message, exit 1);
 *  - every call from the core must carry the per-process secret (constant-time
 *    check, `authorized`/`unary` below); the secret is removed from the
 *    environment and never logged;
 *  - never outlives the core: exits on SIGTERM/SIGINT, when stdin (a pipe from
 *    the core) closes, or when the parent process changes (the core died).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import {
  APP_PROTOCOL_VERSION,
  ENV_CALLBACK,
  ENV_MAGIC_COOKIE,
  ENV_PROTOCOL_VERSIONS,
  ENV_SECRET,
  ENV_SOCKET_DIR,
  HEALTH_SERVICE_NAME,
  MAGIC_COOKIE_VALUE,
  PLUGIN_SOCKET_NAME,
  SECRET_METADATA_KEY,
  formatHandshakeLine,
  secretMatches,
} from './handshake.js';
import { createStderrLogger, type JsonLogger } from './logger.js';
import { CHANNEL_OPTIONS, loadProtos, type PluginProtos } from './proto.js';

const PARENT_POLL_MS = 1000;
const CLEANUP_GRACE_MS = 2000;

export type UnaryCall = { request: Record<string, unknown>; metadata: grpc.Metadata };
export type UnaryHandler = (call: UnaryCall, cb: grpc.sendUnaryData<unknown>) => void;

export interface PluginProcess {
  protos: PluginProtos;
  server: grpc.Server;
  logger: JsonLogger;
  /** Where the core serves this process's callbacks (storage, system view); null when the core gave none. */
  callbackPath: string | null;
  /** The per-process secret, for the callback client only. */
  secretText: string;
  /** Whether a call carries the core's secret (constant time). */
  authorized(md: grpc.Metadata): boolean;
  /** A unary handler that refuses calls without the secret and answers INTERNAL when `fn` rejects. */
  unary(fn: (req: Record<string, unknown>, md: grpc.Metadata) => Promise<unknown>): UnaryHandler;
  /**
   * Binds the socket, installs the lifetime hooks and prints the handshake
   * line. `cleanup` runs (bounded by a grace period) before the process exits.
   */
  listen(cleanup: () => Promise<void>): Promise<{ socketPath: string; stop(code?: number): Promise<never> }>;
}

function refuse(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

/** Checks the handshake environment (exits with a message when it is wrong) and prepares the gRPC server with the health service. */
export function startPluginProcess(opts: {
  requireCallback: boolean;
  /** Log an uncaught exception by class and code only (database drivers put credentials in their messages). */
  redactUncaught?: boolean;
}): PluginProcess {
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
  const callbackPath = process.env[ENV_CALLBACK] || null;
  const secretText = process.env[ENV_SECRET];
  if (!socketDir || !secretText || (opts.requireCallback && !callbackPath)) {
    refuse(`missing ${ENV_SOCKET_DIR}, ${opts.requireCallback ? `${ENV_CALLBACK} or ` : ''}${ENV_SECRET}`);
  }
  // The secret stays only in memory; nothing below may log or forward it.
  const secret = Buffer.from(secretText, 'utf8');
  delete process.env[ENV_SECRET];

  const logger = createStderrLogger();
  const protos = loadProtos();
  const server = new grpc.Server(CHANNEL_OPTIONS);
  const authorized = (md: grpc.Metadata) => secretMatches(secret, md.get(SECRET_METADATA_KEY)[0]);
  const unary: PluginProcess['unary'] = (fn) => (call, cb) => {
    if (!authorized(call.metadata)) return cb({ code: grpc.status.UNAUTHENTICATED, details: 'core secret mismatch' });
    fn(call.request, call.metadata).then(
      (res) => cb(null, res),
      (err: unknown) => cb({ code: grpc.status.INTERNAL, details: err instanceof Error ? err.message : 'internal error' }),
    );
  };

  const servingStatus = (service: unknown) => (service === '' || service === HEALTH_SERVICE_NAME ? 'SERVING' : 'SERVICE_UNKNOWN');
  server.addService(protos.Health.service, {
    Check: (call: UnaryCall, cb: grpc.sendUnaryData<unknown>) => cb(null, { status: servingStatus(call.request.service) }),
    Watch: (call: grpc.ServerWritableStream<{ service: string }, unknown>) => {
      // Status never changes while the process lives; answer once and keep the stream open.
      call.write({ status: servingStatus(call.request.service) });
    },
  });

  const listen: PluginProcess['listen'] = async (cleanup) => {
    const socketPath = path.join(socketDir, PLUGIN_SOCKET_NAME);
    fs.rmSync(socketPath, { force: true });
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(`unix:${socketPath}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
    );

    let stopping: Promise<never> | null = null;
    const stop = (code = 0): Promise<never> => {
      if (stopping) return stopping;
      stopping = (async () => {
        await Promise.race([cleanup().catch(() => undefined), new Promise((r) => setTimeout(r, CLEANUP_GRACE_MS).unref())]);
        server.forceShutdown();
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
      const code = String((err as { code?: unknown }).code ?? '');
      logger.error('uncaught exception', opts.redactUncaught ? { error: err.name, code } : { error: err.message });
      process.exit(1);
    });

    process.stdout.write(formatHandshakeLine(socketPath) + '\n');
    return { socketPath, stop };
  };

  return { protos, server, logger, callbackPath, secretText, authorized, unary, listen };
}
