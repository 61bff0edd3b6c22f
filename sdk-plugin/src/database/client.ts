/**
 * The engine's side of the Database service: `createDatabaseClient` gives one
 * connection's view of a database plugin over a `DatabaseTransport`, which
 * carries proto/database.proto's frames either to a plugin process
 * (`createDatabasePluginClient`: its stream) or to a built-in plugin in the
 * engine's own process (in-process.ts). Both take and answer the same
 * messages, each naming its connection; every call has a deadline, and typed
 * errors from the plugin become StrongroomErrors again.
 *
 * Channels and their streams are set up once per process address (socket
 * path) and shared by every connection on it, never per call: a unary call
 * per credential cost both processes an HTTP/2 stream each (issue 20).
 */
import * as grpc from '@grpc/grpc-js';
import { StrongroomError } from '../errors.js';
import { SECRET_METADATA_KEY } from '../transport/handshake.js';
import { CHANNEL_OPTIONS, loadProtos } from '../transport/proto.js';
import type { WireFrame } from '../transport/codec.js';
import { createStreamLane, type StreamLane } from '../transport/stream-lane.js';
import {
  decodeConfig,
  encodeDeleteUserRequest,
  encodeInitializeRequest,
  encodeNewUserRequest,
  encodeUpdateUserRequest,
} from './codec.js';
import { CONNECTION_NOT_INITIALIZED, type DatabasePluginAddress, type DatabasePluginClient } from './types.js';
import type * as wire from '../transport/wire.js';

/** How a connection's calls reach its plugin: one request frame member in, the reply frame out. */
export interface DatabaseTransport {
  /**
   * One call: request member `kind` with message `body`, `fields` beside it on
   * the frame (its connection_id). Answers the reply frame; a reply `error`
   * rejects as its typed error, a passed deadline as a 504.
   */
  call(kind: string, body: unknown, timeoutMs: number, fields: { connection_id: string }): Promise<WireFrame>;
  /** The plugin's database type ("postgresql"). */
  type(timeoutMs: number): Promise<string>;
}

export interface DatabasePluginClientOptions {
  /** Deadline of each call; default 30 s (a NewUser may wait on the database's locks). */
  timeoutMs?: number;
  /** Names the plugin in errors ("postgresql-database-plugin v0.1.0+builtin"); default "database plugin <version>". */
  label?: string;
}

const DEFAULT_TIMEOUT_MS = 30_000;

type UnaryFn = (req: unknown, md: grpc.Metadata, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: unknown) => void) => void;

interface Channel {
  client: grpc.Client;
  secret: string;
  /** The multiplexed Database stream, opened on first use and again after it broke. */
  lane: StreamLane;
}
const channels = new Map<string, Channel>();

// grpc-js aliases each RPC under a lower-case name too, so a service method named
// `Close` would shadow `client.close()`: close the channel through the prototype.
const closeChannel = (ch: Channel) => {
  ch.lane.close(new StrongroomError('unavailable', 'the database plugin channel was closed'));
  grpc.Client.prototype.close.call(ch.client);
};

/** The channel to a plugin process; `label` names the plugin in the errors of its stream. */
function channelFor(address: DatabasePluginAddress, label: string): Channel {
  const cached = channels.get(address.socketPath);
  // Same path, other secret: the process was replaced; its old channel is useless.
  if (cached && cached.secret === address.secret) return cached;
  if (cached) closeChannel(cached);
  const { Database } = loadProtos();
  const client = new Database(`unix:${address.socketPath}`, grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
  const lane = createStreamLane({
    client,
    secret: address.secret,
    // A cancel of no call: the plugin drops it, and it frees the last request's frame.
    idleFrame: { id: 0, cancel: {} },
    onTimeout: (kind, ms) => new StrongroomError('coded', `${label} did not answer ${kind} within ${ms} ms`, { status: 504 }),
    // The engine reconnects on `unavailable` (asks the core for the process again).
    onBroken: (cause) =>
      cause?.code === grpc.status.UNIMPLEMENTED
        ? // A plugin built with an SDK from before the Database stream serves only unary calls.
          new StrongroomError('plugin_failed', `${label} does not serve the Database stream; rebuild it against this SDK`)
        : new StrongroomError('unavailable', `${label} is not reachable (${cause ? cause.details || cause.message : 'stream ended'})`),
  });
  const ch: Channel = { client, secret: address.secret, lane };
  channels.set(address.socketPath, ch);
  return ch;
}

/** Closes the shared channel to a plugin process (call it when that process is gone). */
export function closeDatabasePluginChannel(socketPath: string): void {
  const cached = channels.get(socketPath);
  if (cached) closeChannel(cached);
  channels.delete(socketPath);
}

/** Whether an error means "that plugin process does not know this connection": initialize again and retry once. */
export function isConnectionNotInitialized(err: unknown): boolean {
  return err instanceof StrongroomError && err.code === CONNECTION_NOT_INITIALIZED;
}

/** One connection's client on a plugin process, over its stream. */
export function createDatabasePluginClient(
  address: DatabasePluginAddress,
  connectionId: string,
  opts: DatabasePluginClientOptions = {},
): DatabasePluginClient {
  const label = opts.label ?? `database plugin ${address.version}`;
  return createDatabaseClient(streamTransport(address, label), connectionId, { ...opts, label });
}

/** The transport to a plugin process: frames on its shared stream, Type as its one unary call. */
function streamTransport(address: DatabasePluginAddress, label: string): DatabaseTransport {
  return {
    call: (kind, body, timeoutMs, fields) => channelFor(address, label).lane.call(kind, body, timeoutMs, fields),
    type: (timeoutMs) =>
      new Promise<string>((resolve, reject) => {
        const md = new grpc.Metadata();
        md.set(SECRET_METADATA_KEY, address.secret);
        const { client } = channelFor(address, label);
        (client as unknown as { Type: UnaryFn }).Type.call(client, {}, md, { deadline: Date.now() + timeoutMs }, (err, res) => {
          if (!err) return resolve((res as wire.DatabaseTypeReply).type);
          if (err.code === grpc.status.UNAVAILABLE) return reject(new StrongroomError('unavailable', `${label} is not reachable`));
          reject(new StrongroomError('plugin_failed', `${label} failed during Type: ${err.details || err.message}`));
        });
      }),
  };
}

/** One connection's client over `transport`: the engine's one code path to a plugin, in a process or in this one. */
export function createDatabaseClient(transport: DatabaseTransport, connectionId: string, opts: DatabasePluginClientOptions = {}): DatabasePluginClient {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const label = opts.label ?? 'database plugin';
  const frameFields = { connection_id: connectionId };

  /** One call; answers the reply member `${kind}_reply`. */
  const call = async <T>(kind: string, body: unknown): Promise<T> => {
    const frame = await transport.call(kind, body, timeoutMs, frameFields);
    const reply = frame[`${kind}_reply`];
    if (reply === undefined || reply === null) throw new StrongroomError('plugin_failed', `${label} answered ${kind} with ${String(frame.kind)}`);
    return reply as T;
  };

  return {
    type: () => transport.type(timeoutMs),
    async initialize(req) {
      const r = await call<wire.InitializeResponse>('initialize', encodeInitializeRequest(req));
      return { config: decodeConfig(r.config_json) };
    },
    async newUser(req) {
      return { username: (await call<wire.NewUserResponse>('new_user', encodeNewUserRequest(req))).username };
    },
    async updateUser(req) {
      await call('update_user', encodeUpdateUserRequest(req));
    },
    async deleteUser(req) {
      await call('delete_user', encodeDeleteUserRequest(req));
    },
    async close() {
      await call('close', {});
    },
  };
}
