/**
 * Loads the wire contract once per process with @grpc/proto-loader and
 * exposes the service constructors. The contract is proto/*.proto, compiled
 * into protocol.json (scripts/proto-json.js; a unit test keeps the two in
 * step) so nothing is read from disk at run time: a plugin bundled into one
 * file carries its contract inside it.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protocol from './protocol.json';

export interface PluginProtos {
  Backend: grpc.ServiceClientConstructor;
  Storage: grpc.ServiceClientConstructor;
  SystemView: grpc.ServiceClientConstructor;
  Health: grpc.ServiceClientConstructor;
  Database: grpc.ServiceClientConstructor;
}

let cached: PluginProtos | null = null;

/** Options shared by every loader: snake_case fields, 64-bit ints as numbers, defaults filled, `kind` set for oneofs. */
export const LOADER_OPTIONS: protoLoader.Options = { keepCase: true, longs: Number, defaults: true, oneofs: true };

export function loadProtos(): PluginProtos {
  if (cached) return cached;
  const def = protoLoader.fromJSON(protocol as Parameters<typeof protoLoader.fromJSON>[0], LOADER_OPTIONS);
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    strongroom: { plugin: { v1: Record<string, grpc.ServiceClientConstructor> }; database: { v1: Record<string, grpc.ServiceClientConstructor> } };
    grpc: { health: { v1: Record<string, grpc.ServiceClientConstructor> } };
  };
  const v1 = pkg.strongroom.plugin.v1;
  const pick = (rec: Record<string, grpc.ServiceClientConstructor>, name: string): grpc.ServiceClientConstructor => {
    const c = rec[name];
    if (!c) throw new Error(`proto service ${name} missing`);
    return c;
  };
  cached = {
    Backend: pick(v1, 'Backend'),
    Storage: pick(v1, 'Storage'),
    SystemView: pick(v1, 'SystemView'),
    Health: pick(pkg.grpc.health.v1, 'Health'),
    Database: pick(pkg.strongroom.database.v1, 'Database'),
  };
  return cached;
}

/** Channel options for both directions: large batches fit, no per-call channel set-up. */
export const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.max_receive_message_length': 64 * 1024 * 1024,
  'grpc.max_send_message_length': 64 * 1024 * 1024,
};
