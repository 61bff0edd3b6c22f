/**
 * External plugins for end-to-end tests, laid out as one ships them: a
 * directory of its own inside the server's plugin directory, holding its code
 * and its dependencies. The server runs the entry file with its own node in
 * the plugin sandbox, which may read that directory (and the shared plugin
 * runtime) and nothing else, so the code must be there, not referenced from
 * the repository.
 */
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

const REPO_NODE_MODULES = resolve(__dirname, '../../node_modules');

export interface ExternalPlugin {
  /** The catalog `command`: the entry file, relative to the plugin directory. */
  command: string;
  sha256: string;
  /** The plugin's own directory. */
  dir: string;
}

/**
 * Copies the directory of `main` (a built plugin's dist/) into
 * `<pluginDir>/<name>/`, links its node_modules to the repository's, and
 * returns the entry. With `prelude`, the entry is a file that runs that code
 * first and then loads `main` (a test's wrapper, instead of a shell script).
 */
export function externalPlugin(pluginDir: string, name: string, main: string, opts: { prelude?: string } = {}): ExternalPlugin {
  const dir = join(pluginDir, name);
  mkdirSync(dir, { recursive: true });
  cpSync(dirname(main), dir, { recursive: true });
  try {
    symlinkSync(REPO_NODE_MODULES, join(dir, 'node_modules'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  let entry = basename(main);
  if (opts.prelude !== undefined) {
    entry = `entry-${createHash('sha256').update(opts.prelude).digest('hex').slice(0, 8)}.js`;
    writeFileSync(join(dir, entry), `${opts.prelude}\nrequire('./${basename(main)}');\n`);
  }
  const command = `${name}/${entry}`;
  return { command, sha256: sha256Of(join(pluginDir, command)), dir };
}

function sha256Of(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}
