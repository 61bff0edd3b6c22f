/**
 * Core side of the Backend service: one channel to one plugin process, one
 * long-lived multiplexed stream for the hot calls (HandleRequest, existence
 * checks, InvalidateKey, Periodic) and unary calls for a mount's Setup and
 * Cleanup (and health). Every call has a deadline; the core's
 * secret for the process goes with every call.
 */
import * as grpc from '@grpc/grpc-js';
import type { BackendDescription } from '../describe.js';
import type { ExistenceResult, LogicalRequest, LogicalResponse, MountInfo, SpecialPaths } from '../logical.js';
import type { MountTtls } from '../system-view.js';
import { StrongroomError } from '../errors.js';
import {
  decodeDescription,
  decodeExistence,
  decodeHandleReply,
  decodeSpecialPaths,
  encodeMount,
  encodeRequest,
  throwIfError,
  type WireFrame,
} from './codec.js';
import { SECRET_METADATA_KEY } from './handshake.js';
import { waitHealthy } from './health.js';
import { createStreamLane } from './stream-lane.js';
import { CHANNEL_OPTIONS, loadProtos } from './proto.js';
import type * as wire from './wire.js';

export interface SetupResult {
  specialPaths: SpecialPaths;
  describe: BackendDescription;
}

export interface BackendClient {
  /** Waits for the channel and the health service to report SERVING. */
  waitHealthy(timeoutMs: number): Promise<void>;
  setup(mount: MountInfo, timeoutMs?: number): Promise<SetupResult>;
  cleanup(mountUuid: string, timeoutMs?: number): Promise<void>;
  /** `mountTtls` go with the request, so the engine need not ask for them (MountTtls). */
  handleRequest(req: LogicalRequest, mountTtls?: MountTtls): Promise<LogicalResponse | null>;
  existenceCheck(req: LogicalRequest, timeoutMs?: number): Promise<ExistenceResult>;
  invalidateKey(mountUuid: string, key: string, timeoutMs?: number): Promise<void>;
  periodic(mountUuid: string, timeoutMs?: number): Promise<void>;
  /** Fail every call in flight (the process died). */
  failAll(err: Error): void;
  inFlight(): number;
  close(): void;
}

export interface BackendClientOptions {
  socketPath: string;
  /** The per-process secret, sent as metadata with every call. */
  secret: string;
  /** Names the plugin in errors ("kv v0.1.0+builtin"). */
  label: string;
  callTimeoutMs: number;
  /** Called once when the stream breaks (the supervisor treats it as a crash). */
  onBroken?(reason: string): void;
}

type UnaryFn = (req: unknown, md: grpc.Metadata, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: unknown) => void) => void;

export function createBackendClient(opts: BackendClientOptions): BackendClient {
  const protos = loadProtos();
  const address = `unix:${opts.socketPath}`;
  const client = new protos.Backend(address, grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
  const md = new grpc.Metadata();
  md.set(SECRET_METADATA_KEY, opts.secret);

  const timeoutError = (what: string, ms: number) =>
    new StrongroomError('coded', `plugin ${opts.label} did not answer ${what} within ${ms} ms`, { status: 504 });
  const failedError = (what: string, detail: string) =>
    new StrongroomError('plugin_failed', `plugin ${opts.label} failed during ${what}: ${detail}`);

  const unary = <T>(method: string, req: unknown, timeoutMs = opts.callTimeoutMs): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const fn = (client as unknown as Record<string, UnaryFn>)[method];
      if (!fn) return reject(new StrongroomError('internal', `no method ${method}`));
      fn.call(client, req, md, { deadline: Date.now() + timeoutMs }, (err, res) => {
        if (!err) return resolve(res as T);
        reject(err.code === grpc.status.DEADLINE_EXCEEDED ? timeoutError(method, timeoutMs) : failedError(method, err.details || err.message));
      });
    });

  // A broken stream is a dead process to the supervisor: never reopened here (streamCall refuses).
  let broken = false;
  const lane = createStreamLane({
    client,
    secret: opts.secret,
    onTimeout: timeoutError,
    // A cancel of no call: the plugin drops it, and it frees the last request's frame.
    idleFrame: { id: 0, cancel: {} },
    onBroken: (cause) => {
      const reason = cause ? cause.message : 'stream ended';
      broken = true;
      opts.onBroken?.(reason);
      return failedError('a call', `connection lost (${reason})`);
    },
  });

  const streamCall = async <K extends keyof wire.Frame>(
    kind: keyof wire.Frame,
    body: unknown,
    replyKind: K,
    timeoutMs: number,
  ): Promise<NonNullable<wire.Frame[K]>> => {
    if (broken) throw failedError(kind, 'connection lost');
    const frame = (await lane.call(kind, body, timeoutMs)) as wire.Frame;
    const reply = frame[replyKind];
    if (reply === undefined || reply === null) throw failedError(kind, `unexpected reply ${String(frame.kind)}`);
    return reply;
  };

  return {
    async waitHealthy(timeoutMs) {
      await waitHealthy({ socketPath: opts.socketPath, secret: opts.secret, label: opts.label, timeoutMs });
      lane.open();
    },
    async setup(mount, timeoutMs) {
      const r = await unary<wire.SetupReply>('Setup', { mount: encodeMount(mount) }, timeoutMs);
      throwIfError(r);
      return { specialPaths: decodeSpecialPaths(r.special_paths), describe: decodeDescription(r.describe) };
    },
    async cleanup(mountUuid, timeoutMs) {
      throwIfError(await unary<wire.ErrorReply>('Cleanup', { mount_uuid: mountUuid }, timeoutMs));
    },
    async handleRequest(req, mountTtls) {
      return decodeHandleReply(await streamCall('handle_request', encodeRequest(req, mountTtls), 'handle_request_reply', opts.callTimeoutMs));
    },
    async existenceCheck(req, timeoutMs = opts.callTimeoutMs) {
      return decodeExistence(
        await streamCall('existence_check', encodeRequest(req), 'existence_check_reply', timeoutMs),
      );
    },
    async invalidateKey(mountUuid, key, timeoutMs = opts.callTimeoutMs) {
      throwIfError(await streamCall('invalidate_key', { mount_uuid: mountUuid, key }, 'invalidate_key_reply', timeoutMs));
    },
    async periodic(mountUuid, timeoutMs = opts.callTimeoutMs) {
      throwIfError(await streamCall('periodic', { mount_uuid: mountUuid }, 'periodic_reply', timeoutMs));
    },
    failAll: (err) => lane.failAll(err),
    inFlight: () => lane.inFlight(),
    close() {
      broken = true;
      lane.close(failedError('a call', 'connection closed'));
      client.close();
    },
  };
}
