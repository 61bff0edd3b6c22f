/**
 * The built-in plugins: catalog entries run as child processes like any other
 * plugin, but for the database plugins, whose built-in version runs inside the
 * database engine's process (their own bundle still builds: a process, as an
 * external version of them runs). They are the workspace packages under plugins/ whose package.json
 * declares one (`"strongroom": { "type", "name", "entry" }`), so a new engine
 * is its package and nothing here. Each runs as the one file the build
 * bundles its entry into, `dist/plugin.js` (scripts/bundle-plugin.js): all
 * the sandbox lets it read.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import type { BuiltinPlugin } from './catalog.js';

const ROOT = resolve(__dirname, '../../..');
const PLUGINS_DIR = resolve(ROOT, 'plugins');
const BUILTIN_VERSION = 'v0.1.0+builtin';
/** Where the build writes a plugin package's bundle (scripts/bundle-plugin.js). */
const BUNDLE = 'dist/plugin.js';

/** The `strongroom` field of a plugin package's manifest. */
const manifestSchema = z.strictObject({
  type: z.enum(['secret', 'auth', 'database']),
  name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'must be lower-case letters, digits and dashes'),
  /** The process's compiled entry, relative to the package (its bin): what the build bundles into dist/plugin.js. */
  entry: z.string().regex(/^[\w./-]+\.js$/).refine((e) => !e.split('/').includes('..'), 'must stay inside the package'),
});

export function builtinPlugins(pluginsDir = PLUGINS_DIR): BuiltinPlugin[] {
  const out: BuiltinPlugin[] = [];
  for (const dir of readdirSync(pluginsDir).sort()) {
    const file = resolve(pluginsDir, dir, 'package.json');
    if (!existsSync(file)) continue;
    const field = (JSON.parse(readFileSync(file, 'utf8')) as { strongroom?: unknown }).strongroom;
    if (field === undefined) continue;
    const parsed = manifestSchema.safeParse(field);
    if (!parsed.success) throw new Error(`${file}: strongroom.${parsed.error.issues[0]?.path.join('.') ?? ''}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    const { type, name } = parsed.data;
    out.push({ type, name, version: BUILTIN_VERSION, main: resolve(pluginsDir, dir, BUNDLE) });
  }
  return out;
}
