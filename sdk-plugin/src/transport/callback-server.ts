/**
 * Core side of the plugin callbacks: serves Storage and SystemView for ONE
 * plugin process on a unix socket of its own.
 *
 * Security invariants:
 *  - every stream (Storage and SystemView each serve only `Stream`) must
 *    present the process's current secret as metadata when it opens; it is
 *    compared in constant time;
 *  - every operation names a mount uuid, and `resolve()` answers only for the
 *    mounts this process serves, so a plugin can never read or write another
 *    plugin's (or another mount's) storage;
 *  - storage errors reach the plugin as typed errors, never raw exceptions
 *    (whose text could carry key material).
 */
import * as fs from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { MAX_BATCH_OPS, type Storage, type StorageOp } from '../storage.js';
import type { SystemView } from '../system-view.js';
import { badRequest, permissionDenied, unsupportedOperation } from '../errors.js';
import type { WireFrame } from './codec.js';
import type * as wire from './wire.js';
import { SECRET_METADATA_KEY, secretMatches } from './handshake.js';
import { serveFrames } from './mux.js';
import { CHANNEL_OPTIONS, loadProtos } from './proto.js';

export interface MountCallbacks {
  storage: Storage;
  system: SystemView;
}

export interface CallbackServerOptions {
  socketPath: string;
  /** The secret the process must present (rotated on every process start). */
  secret(): Buffer;
  /** The callbacks of a mount this process serves, or null when it does not serve it. */
  resolve(mountUuid: string): MountCallbacks | null;
}

export interface CallbackServer {
  start(): Promise<void>;
  close(): Promise<void>;
}

export function createCallbackServer(opts: CallbackServerOptions): CallbackServer {
  const protos = loadProtos();
  const server = new grpc.Server(CHANNEL_OPTIONS);

  const authorized = (md: grpc.Metadata): boolean => secretMatches(opts.secret(), md.get(SECRET_METADATA_KEY)[0]);

  const mountOf = (uuid: unknown): MountCallbacks => {
    const cb = typeof uuid === 'string' ? opts.resolve(uuid) : null;
    if (!cb) throw permissionDenied(`mount ${String(uuid)} is not served by this plugin process`);
    return cb;
  };

  /** Storage operations, by request frame kind. */
  const storageOps: Record<string, (a: Record<string, unknown>) => Promise<[string, unknown]>> = {
    async get(a) {
      const v = await mountOf(a.mount_uuid).storage.get(String(a.key));
      return ['get_reply', v === null ? { found: false, err: null } : { found: true, value: v, err: null }];
    },
    async put(a) {
      await mountOf(a.mount_uuid).storage.put(String(a.key), a.value as Uint8Array);
      return ['put_reply', { err: null }];
    },
    async delete(a) {
      await mountOf(a.mount_uuid).storage.delete(String(a.key));
      return ['delete_reply', { err: null }];
    },
    async list(a) {
      return ['list_reply', { keys: await mountOf(a.mount_uuid).storage.list(String(a.prefix)), err: null }];
    },
    async scan(a) {
      const page = { after: String(a.after ?? ''), limit: Number(a.limit ?? 0) };
      return ['scan_reply', { keys: await mountOf(a.mount_uuid).storage.listRecursive(String(a.prefix), page), err: null }];
    },
    async batch(a) {
      const storage = mountOf(a.mount_uuid).storage;
      const ops = Array.isArray(a.ops) ? (a.ops as wire.StorageBatchOp[]) : [];
      if (ops.length > MAX_BATCH_OPS) throw badRequest(`a storage batch carries at most ${MAX_BATCH_OPS} operations`);
      await storage.batch(ops.map((o): StorageOp => (o.delete ? { type: 'delete', key: String(o.key) } : { type: 'put', key: String(o.key), value: o.value })));
      return ['batch_reply', { err: null }];
    },
  };

  const systemOps: Record<string, (a: Record<string, unknown>) => Promise<[string, unknown]>> = {
    async default_lease_ttl(a) {
      return ['default_lease_ttl_reply', { seconds: await mountOf(a.mount_uuid).system.defaultLeaseTtl(), err: null }];
    },
    async max_lease_ttl(a) {
      return ['max_lease_ttl_reply', { seconds: await mountOf(a.mount_uuid).system.maxLeaseTtl(), err: null }];
    },
    async generate_password(a) {
      const value = await mountOf(a.mount_uuid).system.generatePasswordFromPolicy(String(a.policy_name));
      return ['generate_password_reply', { value, err: null }];
    },
    async core_version(a) {
      return ['core_version_reply', { value: await mountOf(a.mount_uuid).system.coreVersion(), err: null }];
    },
    async open_database_plugin(a) {
      const system = mountOf(a.mount_uuid).system;
      if (!system.openDatabasePlugin) throw unsupportedOperation('open_database_plugin');
      const addr = await system.openDatabasePlugin(String(a.name), String(a.version ?? ''));
      return ['open_database_plugin_reply', { socket_path: addr.socketPath, secret: addr.secret, version: addr.version, builtin: addr.builtin, err: null }];
    },
    async send_event(a) {
      let metadata: unknown;
      try {
        metadata = JSON.parse(String(a.metadata_json || '{}'));
      } catch {
        throw badRequest('event metadata is not JSON');
      }
      await mountOf(a.mount_uuid).system.sendEvent(String(a.event_type), String(a.path), metadata as Record<string, string | number | boolean>);
      return ['send_event_reply', { err: null }];
    },
  };

  const frameHandler = (ops: typeof storageOps) => async (frame: WireFrame) => {
    const kind = frame.kind;
    const op = kind ? ops[kind] : undefined;
    if (!op || !kind) throw unsupportedOperation(String(kind));
    return op(frame[kind] as Record<string, unknown>);
  };

  const streamHandler = (ops: typeof storageOps) => (call: grpc.ServerDuplexStream<WireFrame, WireFrame>) => {
    if (!authorized(call.metadata)) {
      // grpc-js ends a server stream with this status on an 'error' event.
      call.emit('error', { code: grpc.status.UNAUTHENTICATED, details: 'plugin secret mismatch' });
      return;
    }
    serveFrames(call, frameHandler(ops));
    call.on('end', () => call.end());
    call.on('error', () => undefined);
  };

  server.addService(protos.Storage.service, { Stream: streamHandler(storageOps) });
  server.addService(protos.SystemView.service, { Stream: streamHandler(systemOps) });

  return {
    start() {
      fs.rmSync(opts.socketPath, { force: true });
      return new Promise((resolve, reject) => {
        server.bindAsync(`unix:${opts.socketPath}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve()));
      });
    },
    close() {
      return new Promise((resolve) => {
        server.tryShutdown(() => resolve());
        // Streams from a dead plugin may linger; do not wait on them.
        setTimeout(() => server.forceShutdown(), 500).unref();
      });
    },
  };
}
