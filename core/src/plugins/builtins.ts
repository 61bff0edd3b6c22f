/** The built-in plugins: catalog entries run as child processes like any other plugin. */
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import type { BuiltinPlugin } from './catalog.js';

const ROOT = resolve(__dirname, '../../..');
const PLUGINS_DIR = resolve(ROOT, 'plugins');
const BUILTIN_VERSION = 'v0.1.0+builtin';

export function builtinPlugins(): BuiltinPlugin[] {
  // Each built-in may read its own package (dist/ and package.json), nothing of the others.
  const pkg = (name: string) => ({ main: resolve(PLUGINS_DIR, name, 'dist/main.js'), codeDir: resolve(PLUGINS_DIR, name) });
  return [
    { type: 'secret', name: 'kv', version: BUILTIN_VERSION, ...pkg('kv') },
    { type: 'secret', name: 'transit', version: BUILTIN_VERSION, ...pkg('transit') },
    { type: 'auth', name: 'approle', version: BUILTIN_VERSION, ...pkg('approle') },
    { type: 'auth', name: 'userpass', version: BUILTIN_VERSION, ...pkg('userpass') },
    { type: 'secret', name: 'database', version: BUILTIN_VERSION, ...pkg('database') },
    { type: 'secret', name: 'rabbitmq', version: BUILTIN_VERSION, ...pkg('rabbitmq') },
    { type: 'secret', name: 'ssh', version: BUILTIN_VERSION, ...pkg('ssh') },
    { type: 'secret', name: 'ldap', version: BUILTIN_VERSION, ...pkg('ldap') },
    { type: 'database', name: 'postgresql-database-plugin', version: BUILTIN_VERSION, ...pkg('database-postgresql') },
    { type: 'database', name: 'mysql-database-plugin', version: BUILTIN_VERSION, ...pkg('database-mysql') },
  ];
}

/**
 * The plugin runtime every plugin process may read, and nothing else of the
 * install: the SDK (sdk-plugin), the proto files it loads at start, and the
 * shared dependencies (node_modules: grpc-js, zod, the database drivers). All
 * public code; the install's config, TLS keys and data directory are elsewhere
 * and stay out of every plugin's read grant.
 */
export function pluginRuntimeDirs(): string[] {
  return ['node_modules', 'sdk-plugin', 'proto'].map((d) => realpathSync(resolve(ROOT, d)));
}
