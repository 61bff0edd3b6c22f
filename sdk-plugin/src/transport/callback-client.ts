/**
 * Plugin side of the callbacks into the core: a Storage and a SystemView per
 * mount, all carried by two long-lived multiplexed streams on one channel to
 * the core's callback socket. Every stream is opened with the per-process
 * secret as metadata; the core checks it and that the named mount is served by
 * this process, so a plugin can reach only its own mounts' storage.
 */
import * as grpc from '@grpc/grpc-js';
import type { Storage } from '../storage.js';
import type { MountTtls, SystemView } from '../system-view.js';
import { StrongroomError } from '../errors.js';
import { throwIfError, type WireFrame } from './codec.js';
import { CHANNEL_OPTIONS, loadProtos } from './proto.js';
import { createStreamLane } from './stream-lane.js';
import type * as wire from './wire.js';

export interface CallbackClient {
  storage(mountUuid: string): Storage;
  system(mountUuid: string): SystemView;
  /** The mount's TTLs as a request from the core carried them: its SystemView answers from these from now on. */
  noteMountTtls(mountUuid: string, ttls: MountTtls): void;
  forgetMount(mountUuid: string): void;
  close(): void;
}

export interface CallbackClientOptions {
  /** Unix socket path of the core's callback server. */
  socketPath: string;
  secret: string;
  callTimeoutMs?: number;
}

export function createCallbackClient(opts: CallbackClientOptions): CallbackClient {
  const protos = loadProtos();
  const address = `unix:${opts.socketPath}`;
  const storageClient = new protos.Storage(address, grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
  // Same address and options: grpc-js shares one subchannel between the two clients.
  const systemClient = new protos.SystemView(address, grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
  const timeoutMs = opts.callTimeoutMs ?? 30_000;

  const lane = (client: grpc.Client, label: string) => {
    const l = createStreamLane({
      client,
      secret: opts.secret,
      onTimeout: (kind, ms) => new StrongroomError('coded', `${label} ${kind} call to the core timed out after ${ms} ms`, { status: 504 }),
      onBroken: (cause) => new StrongroomError('unavailable', `${label} stream to the core closed: ${cause ? cause.message : 'end'}`),
    });
    return {
      call: (kind: string, body: unknown) => l.call(kind, body, timeoutMs),
      close: () => l.close(new StrongroomError('unavailable', `${label} stream to the core closed: the process is stopping`)),
    };
  };

  const storageLane = lane(storageClient, 'storage');
  const systemLane = lane(systemClient, 'system view');
  // The latest TTLs per mount. A tune reaches a mount's next request; until one comes, work the
  // engine starts by itself (a rotation) sees the values of the request before (DESIGN §3).
  const mountTtls = new Map<string, MountTtls>();

  const reply = <T extends { err: wire.WireError | null }>(frame: WireFrame, kind: string): T => {
    const r = frame[kind] as T | undefined;
    if (!r) throw new StrongroomError('internal', `malformed ${kind} from the core`);
    throwIfError(r);
    return r;
  };

  return {
    storage(mountUuid) {
      return {
        async get(key) {
          const r = reply<wire.StorageGetReply>(
            await storageLane.call('get', { mount_uuid: mountUuid, key }),
            'get_reply',
          );
          return r.found ? new Uint8Array(r.value.buffer, r.value.byteOffset, r.value.byteLength) : null;
        },
        async put(key, value) {
          reply(await storageLane.call('put', { mount_uuid: mountUuid, key, value }), 'put_reply');
        },
        async delete(key) {
          reply(await storageLane.call('delete', { mount_uuid: mountUuid, key }), 'delete_reply');
        },
        async list(prefix) {
          return reply<wire.StorageListReply>(
            await storageLane.call('list', { mount_uuid: mountUuid, prefix }),
            'list_reply',
          ).keys;
        },
        async listRecursive(prefix, page = {}) {
          return reply<wire.StorageListReply>(
            await storageLane.call('scan', { mount_uuid: mountUuid, prefix, after: page.after ?? '', limit: page.limit ?? 0 }),
            'scan_reply',
          ).keys;
        },
        async batch(ops) {
          if (ops.length === 0) return;
          const wire = ops.map((o) => (o.type === 'put' ? { key: o.key, delete: false, value: o.value } : { key: o.key, delete: true }));
          reply(await storageLane.call('batch', { mount_uuid: mountUuid, ops: wire }), 'batch_reply');
        },
      };
    },
    system(mountUuid) {
      const ref = { mount_uuid: mountUuid };
      return {
        async defaultLeaseTtl() {
          const known = mountTtls.get(mountUuid);
          if (known) return known.defaultTtl;
          return reply<wire.TtlReply>(await systemLane.call('default_lease_ttl', ref), 'default_lease_ttl_reply').seconds;
        },
        async maxLeaseTtl() {
          const known = mountTtls.get(mountUuid);
          if (known) return known.maxTtl;
          return reply<wire.TtlReply>(await systemLane.call('max_lease_ttl', ref), 'max_lease_ttl_reply').seconds;
        },
        async generatePasswordFromPolicy(policyName) {
          return reply<wire.StringReply>(
            await systemLane.call('generate_password', { mount_uuid: mountUuid, policy_name: policyName }),
            'generate_password_reply',
          ).value;
        },
        async coreVersion() {
          return reply<wire.StringReply>(await systemLane.call('core_version', ref), 'core_version_reply').value;
        },
        async openDatabasePlugin(name, version) {
          const r = reply<wire.DatabasePluginAddressReply>(
            await systemLane.call('open_database_plugin', { mount_uuid: mountUuid, name, version }),
            'open_database_plugin_reply',
          );
          return { socketPath: r.socket_path, secret: r.secret, version: r.version, builtin: r.builtin };
        },
        async sendEvent(type, path, metadata = {}) {
          reply(await systemLane.call('send_event', { mount_uuid: mountUuid, event_type: type, path, metadata_json: JSON.stringify(metadata) }), 'send_event_reply');
        },
      };
    },
    noteMountTtls(mountUuid, ttls) {
      mountTtls.set(mountUuid, ttls);
    },
    forgetMount(mountUuid) {
      mountTtls.delete(mountUuid);
    },
    close() {
      storageLane.close();
      systemLane.close();
      storageClient.close();
      systemClient.close();
    },
  };
}
