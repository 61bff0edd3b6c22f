/**
 * Benches and tests run fixture plugins the way the core runs every plugin:
 * as ONE bundled file, the only thing the sandbox lets the process read. This
 * bundles one with the build's own bundler (scripts/bundle-plugin.js).
 */
import * as path from 'node:path';

const { bundlePlugin } = require(path.resolve(__dirname, '../../../scripts/bundle-plugin.js')) as { bundlePlugin(entry: string, outfile: string): string };

/** Bundles the compiled plugin entry `entry` into `dir` (same file name) and returns the bundle's path. */
export function bundledFixture(entry: string, dir: string): string {
  return bundlePlugin(entry, path.join(dir, path.basename(entry)));
}
