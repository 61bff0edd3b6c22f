/** The built-in plugins: catalog entries run as child processes like any other plugin. */
import { resolve } from 'node:path';
import type { BuiltinPlugin } from '../plugins/catalog.js';

const PLUGINS_DIR = resolve(__dirname, '../../../plugins');
const BUILTIN_VERSION = 'v0.1.0+builtin';

export function builtinPlugins(): BuiltinPlugin[] {
  const main = (pkg: string) => resolve(PLUGINS_DIR, pkg, 'dist/main.js');
  return [
    { type: 'secret', name: 'kv', version: BUILTIN_VERSION, main: main('kv') },
    { type: 'secret', name: 'transit', version: BUILTIN_VERSION, main: main('transit') },
    { type: 'auth', name: 'approle', version: BUILTIN_VERSION, main: main('approle') },
    { type: 'secret', name: 'database', version: BUILTIN_VERSION, main: main('database') },
    { type: 'secret', name: 'ldap', version: BUILTIN_VERSION, main: main('ldap') },
    { type: 'database', name: 'postgresql-database-plugin', version: BUILTIN_VERSION, main: main('database-postgresql') },
    { type: 'database', name: 'mysql-database-plugin', version: BUILTIN_VERSION, main: main('database-mysql') },
  ];
}
