/**
 * Loads proto/ once per process with @grpc/proto-loader and exposes the
 * service constructors. The directory is found relative to this file so the
 * same code works from `src/` under ts-jest and from `dist/` (both sit three
 * levels below the repository root); STRONGROOM_PROTO_DIR overrides it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

export interface PluginProtos {
  Backend: grpc.ServiceClientConstructor;
  Storage: grpc.ServiceClientConstructor;
  SystemView: grpc.ServiceClientConstructor;
  Health: grpc.ServiceClientConstructor;
  Database: grpc.ServiceClientConstructor;
}

let cached: PluginProtos | null = null;

export function protoDir(): string {
  const fromEnv = process.env.STRONGROOM_PROTO_DIR;
  if (fromEnv) return fromEnv;
  const candidates = [path.resolve(__dirname, '../../../proto'), path.resolve(__dirname, '../../proto')];
  for (const dir of candidates) {
    if (fs.existsSync(path.join(dir, 'backend.proto'))) return dir;
  }
  throw new Error(`cannot find proto/backend.proto (looked in ${candidates.join(', ')}); set STRONGROOM_PROTO_DIR`);
}

/** Options shared by every loader: snake_case fields, 64-bit ints as numbers, defaults filled, `kind` set for oneofs. */
export const LOADER_OPTIONS: protoLoader.Options = { keepCase: true, longs: Number, defaults: true, oneofs: true };

export function loadProtos(): PluginProtos {
  if (cached) return cached;
  const dir = protoDir();
  const def = protoLoader.loadSync(['backend.proto', 'database.proto', 'grpc/health/v1/health.proto'], {
    ...LOADER_OPTIONS,
    includeDirs: [dir],
  });
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
