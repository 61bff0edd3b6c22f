/**
 * External plugins for end-to-end tests, shipped as the SDK's README says:
 * ONE JavaScript file holding the plugin's code, the SDK and its dependencies
 * (scripts/bundle-plugin.js, the build's own bundler), in a directory of its
 * own inside the server's plugin directory. The server runs that file with its
 * own node in the plugin sandbox, which lets it read the file and nothing else.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';

export const { bundlePlugin } = require(resolve(__dirname, '../../scripts/bundle-plugin.js')) as {
  bundlePlugin(entry: string, outfile: string, opts?: { prelude?: string }): string;
};

export interface ExternalPlugin {
  /** The catalog `command`: the bundled file, relative to the plugin directory. */
  command: string;
  sha256: string;
  /** The plugin's own directory. */
  dir: string;
}

/**
 * Bundles `main` (a built plugin's entry) into `<pluginDir>/<name>/<basename
 * of main>` and returns the entry. With `prelude`, the bundle runs that code
 * first and then `main` (a test's wrapper, instead of a shell script), and is
 * named after the prelude.
 */
export function externalPlugin(pluginDir: string, name: string, main: string, opts: { prelude?: string } = {}): ExternalPlugin {
  const dir = join(pluginDir, name);
  mkdirSync(dir, { recursive: true });
  const file = opts.prelude === undefined ? basename(main) : `entry-${createHash('sha256').update(opts.prelude).digest('hex').slice(0, 8)}.js`;
  bundlePlugin(main, join(dir, file), opts);
  const command = `${name}/${file}`;
  return { command, sha256: sha256Of(join(pluginDir, command)), dir };
}

export function sha256Of(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}
