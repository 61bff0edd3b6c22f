/**
 * Loads the wire contract once per process and exposes the service
 * constructors. The contract is proto/*.proto, compiled into protocol.json
 * (scripts/proto-json.js; a unit test keeps the two in step) so nothing is
 * read from disk at run time: a plugin bundled into one file carries its
 * contract inside it.
 *
 * The service definitions are built here from protobufjs's reflection-only
 * build, the way @grpc/proto-loader builds them (same paths, same message
 * conversion with LOADER_OPTIONS), without what that loader adds for server
 * reflection: the .proto parser and a descriptor of every file encoded for
 * each service, about 1 MB of every plugin process's idle memory.
 */
import * as grpc from '@grpc/grpc-js';
import * as protobuf from 'protobufjs/light';
import protocol from './protocol.json';

export interface PluginProtos {
  Backend: grpc.ServiceClientConstructor;
  Storage: grpc.ServiceClientConstructor;
  SystemView: grpc.ServiceClientConstructor;
  Health: grpc.ServiceClientConstructor;
  Database: grpc.ServiceClientConstructor;
}

let cached: PluginProtos | null = null;

/** How a message becomes an object: snake_case fields, 64-bit ints as numbers, defaults filled, `kind` set for oneofs. */
export const LOADER_OPTIONS: protobuf.IConversionOptions = { longs: Number, defaults: true, oneofs: true };

function serializer(type: protobuf.Type): grpc.serialize<unknown> {
  return (value) => {
    if (Array.isArray(value)) throw new Error(`Failed to serialize message: expected object with ${type.name} structure, got array instead`);
    return type.encode(type.fromObject(value as Record<string, unknown>)).finish() as Buffer;
  };
}

function deserializer(type: protobuf.Type): grpc.deserialize<unknown> {
  return (bytes) => type.toObject(type.decode(bytes), LOADER_OPTIONS);
}

function constructorOf(root: protobuf.Root, fullName: string): grpc.ServiceClientConstructor {
  const service = root.lookupService(fullName);
  const definition: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const method of service.methodsArray) {
    const request = method.resolvedRequestType as protobuf.Type;
    const response = method.resolvedResponseType as protobuf.Type;
    definition[method.name] = {
      path: `/${fullName}/${method.name}`,
      requestStream: !!method.requestStream,
      responseStream: !!method.responseStream,
      requestSerialize: serializer(request),
      requestDeserialize: deserializer(request),
      responseSerialize: serializer(response),
      responseDeserialize: deserializer(response),
    };
  }
  return grpc.makeGenericClientConstructor(definition, service.name);
}

export function loadProtos(): PluginProtos {
  if (cached) return cached;
  const root = protobuf.Root.fromJSON(protocol as protobuf.INamespace);
  root.resolveAll();
  cached = {
    Backend: constructorOf(root, 'strongroom.plugin.v1.Backend'),
    Storage: constructorOf(root, 'strongroom.plugin.v1.Storage'),
    SystemView: constructorOf(root, 'strongroom.plugin.v1.SystemView'),
    Health: constructorOf(root, 'grpc.health.v1.Health'),
    Database: constructorOf(root, 'strongroom.database.v1.Database'),
  };
  return cached;
}

/** Channel options for both directions: large batches fit, no per-call channel set-up. */
export const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.max_receive_message_length': 64 * 1024 * 1024,
  'grpc.max_send_message_length': 64 * 1024 * 1024,
};
