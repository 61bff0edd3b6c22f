/**
 * The engine's side of the Database service: `createDatabasePluginClient`
 * gives one connection's view of a running database plugin process. Every
 * call carries the per-process secret and the connection id as metadata and
 * has a deadline; typed errors from the plugin become StrongroomErrors again.
 *
 * Channels are set up once per process address (socket path) and shared by
 * every connection on it, never per call.
 */
import * as grpc from '@grpc/grpc-js';
import { StrongroomError } from '../errors.js';
import { throwIfError } from '../transport/codec.js';
import { SECRET_METADATA_KEY } from '../transport/handshake.js';
import { CHANNEL_OPTIONS, loadProtos } from '../transport/proto.js';
import {
  decodeConfig,
  encodeDeleteUserRequest,
  encodeInitializeRequest,
  encodeNewUserRequest,
  encodeUpdateUserRequest,
} from './codec.js';
import { CONNECTION_ID_METADATA_KEY, type DatabasePluginAddress, type DatabasePluginClient } from './types.js';
import type * as wire from '../transport/wire.js';

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
}
const channels = new Map<string, Channel>();

// grpc-js aliases each RPC under a lower-case name too, so the Database
// service's `Close` RPC shadows `client.close()`: close the channel through the prototype.
const closeChannel = (client: grpc.Client) => grpc.Client.prototype.close.call(client);

function channelFor(address: DatabasePluginAddress): grpc.Client {
  const cached = channels.get(address.socketPath);
  // Same path, other secret: the process was replaced; its old channel is useless.
  if (cached && cached.secret === address.secret) return cached.client;
  if (cached) closeChannel(cached.client);
  const { Database } = loadProtos();
  const client = new Database(`unix:${address.socketPath}`, grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
  channels.set(address.socketPath, { client, secret: address.secret });
  return client;
}

/** Closes the shared channel to a plugin process (call it when that process is gone). */
export function closeDatabasePluginChannel(socketPath: string): void {
  const cached = channels.get(socketPath);
  if (cached) closeChannel(cached.client);
  channels.delete(socketPath);
}

/** Whether an error means "that plugin process does not know this connection": initialize again and retry once. */
export function isConnectionNotInitialized(err: unknown): boolean {
  return err instanceof StrongroomError && err.code === 'connection_not_initialized';
}

export function createDatabasePluginClient(
  address: DatabasePluginAddress,
  connectionId: string,
  opts: DatabasePluginClientOptions = {},
): DatabasePluginClient {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const label = opts.label ?? `database plugin ${address.version}`;
  const md = new grpc.Metadata();
  md.set(SECRET_METADATA_KEY, address.secret);
  md.set(CONNECTION_ID_METADATA_KEY, connectionId);

  const transportError = (method: string, err: grpc.ServiceError): StrongroomError => {
    switch (err.code) {
      case grpc.status.DEADLINE_EXCEEDED:
        return new StrongroomError('coded', `${label} did not answer ${method} within ${timeoutMs} ms`, { status: 504 });
      case grpc.status.UNAVAILABLE:
        return new StrongroomError('unavailable', `${label} is not reachable`);
      default:
        return new StrongroomError('plugin_failed', `${label} failed during ${method}: ${err.details || err.message}`);
    }
  };

  const call = <T>(method: string, req: unknown): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const client = channelFor(address);
      const fn = (client as unknown as Record<string, UnaryFn>)[method];
      if (!fn) return reject(new StrongroomError('internal', `no method ${method}`));
      fn.call(client, req, md, { deadline: Date.now() + timeoutMs }, (err, res) => (err ? reject(transportError(method, err)) : resolve(res as T)));
    });
  const errorReply = async (method: string, req: unknown): Promise<void> => {
    throwIfError(await call<wire.DatabaseErrorReply>(method, req));
  };

  return {
    async type() {
      return (await call<wire.DatabaseTypeReply>('Type', {})).type;
    },
    async initialize(req) {
      const r = await call<wire.InitializeResponse>('Initialize', encodeInitializeRequest(req));
      throwIfError(r);
      return { config: decodeConfig(r.config_json) };
    },
    async newUser(req) {
      const r = await call<wire.NewUserResponse>('NewUser', encodeNewUserRequest(req));
      throwIfError(r);
      return { username: r.username };
    },
    updateUser: (req) => errorReply('UpdateUser', encodeUpdateUserRequest(req)),
    deleteUser: (req) => errorReply('DeleteUser', encodeDeleteUserRequest(req)),
    async close() {
      await call<unknown>('Close', {});
    },
  };
}
