/**
 * Plugins reach the SDK through its author entry only: `@strongroom/sdk-plugin`,
 * plus `@strongroom/sdk-plugin/testing` in tests and benchmarks and
 * `@strongroom/sdk-plugin/database` in the database engine and its plugins;
 * and the database engine imports its built-in database plugins
 * (`@strongroom/plugin-database-*`), which it runs in its own process.
 * The core's side of the wire (`/host`), the SDK's files by path (`dist/`,
 * `src/`), other workspace packages and relative imports out of the plugin's
 * own directory are refused, so what an engine may use is what the SDK
 * README documents for authors. Checked over plugins/* and the test-only
 * plugins in test/fixtures; the second test shows the check sees each kind
 * of reach-around.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');
const SDK = '@strongroom/sdk-plugin';

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)['"]([^'"]+)['"]/g;
/** The SDK's files named by path (a path.join or a string built to require one). */
const SDK_FILE = /sdk-plugin\/(?:dist|src)\//;

/** A test, a test helper or a benchmark: the places `/testing` belongs. */
const isTestFile = (file: string) => /\.test\.[cm]?[jt]s$/.test(file) || basename(file).startsWith('test-') || file.split(sep).includes('bench');

/** Source files of one plugin directory (no build output, no installed packages). */
function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name === '__snapshots__') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sources(p));
    else if (/\.[cm]?[jt]s$/.test(name) && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** Every plugin directory under `root`: plugins/* and test/fixtures/*-plugin. */
function pluginDirs(root: string): string[] {
  const under = (d: string, keep: (n: string) => boolean) => {
    const abs = join(root, d);
    try {
      return readdirSync(abs).filter(keep).map((n) => join(abs, n)).filter((p) => statSync(p).isDirectory());
    } catch {
      return [];
    }
  };
  return [...under('plugins', () => true), ...under('test/fixtures', (n) => n.endsWith('-plugin'))];
}

/** "file: specifier" for each import under `root`'s plugins that crosses the SDK boundary. */
export function boundaryViolations(root: string): string[] {
  const out: string[] = [];
  for (const dir of pluginDirs(root)) {
    const databasePlugin = /^database(-|$)/.test(basename(dir));
    const databaseEngine = basename(dir) === 'database';
    for (const file of sources(dir)) {
      const text = readFileSync(file, 'utf8');
      const rel = relative(root, file);
      for (const m of text.matchAll(SPECIFIER)) {
        const spec = m[1] as string;
        let allowed = true;
        if (spec.startsWith('@strongroom/')) {
          allowed =
            spec === SDK ||
            (spec === `${SDK}/testing` && isTestFile(file)) ||
            (spec === `${SDK}/database` && databasePlugin) ||
            (/^@strongroom\/plugin-database-[a-z0-9-]+$/.test(spec) && databaseEngine);
        } else if (spec.startsWith('.')) {
          const target = resolve(dirname(file), spec);
          allowed = target === dir || target.startsWith(dir + sep);
        }
        if (!allowed) out.push(`${rel}: ${spec}`);
      }
      for (const line of text.split('\n')) {
        // Comments may name an SDK file to point a reader at it.
        if (SDK_FILE.test(line) && !/^\s*(\*|\/\/|\/\*)/.test(line) && !line.match(SPECIFIER)) out.push(`${rel}: ${line.trim()}`);
      }
    }
  }
  return out.sort();
}

describe('the SDK boundary', () => {
  it('plugins import only the author entry (/testing in tests, /database in database plugins, the built-in database plugins in the database engine)', () => {
    expect(boundaryViolations(ROOT)).toEqual([]);
  });

  it('sees the host entry, the SDK files by path, other packages, a reach out of the plugin, and the testing, database and database-plugin entries out of place', () => {
    const root = mkdtempSync(join(tmpdir(), 'strongroom-boundary-'));
    try {
      const write = (file: string, text: string) => {
        mkdirSync(dirname(join(root, file)), { recursive: true });
        writeFileSync(join(root, file), text);
      };
      write('plugins/echo/src/backend.ts', [
        "import { defineBackend, z } from '@strongroom/sdk-plugin';",
        "import type { SystemView } from '@strongroom/sdk-plugin/host';",
        "import { createMemoryStorage } from '@strongroom/sdk-plugin/testing';",
        "import * as database from '@strongroom/sdk-plugin/database';",
        "export { codec } from '@strongroom/sdk-plugin/dist/transport/codec.js';",
        "import { x } from '../../../core/src/x.js';",
        "import { y } from './y.js';",
        "import { readFileSync } from 'node:fs';",
        "const { f } = require('@strongroom/core');",
        "const sdk = require(path.join(__dirname, '../../../sdk-plugin/dist/index.js'));",
        ' * (see sdk-plugin/src/kit/record-store.ts)',
      ].join('\n'));
      write('plugins/echo/src/backend.test.ts', "import { createTestBackend } from '@strongroom/sdk-plugin/testing';\n");
      write('plugins/echo/bench/run.js', "const { createMemoryStorage } = require('@strongroom/sdk-plugin/testing');\n");
      write('plugins/database-echo/src/main.ts', "import * as database from '@strongroom/sdk-plugin/database';\nconst h = await import('@strongroom/sdk-plugin/host');\n");
      // The database engine loads its built-in database plugins; no other plugin may.
      write('plugins/database/src/builtins.ts', "const pg = await import('@strongroom/plugin-database-postgresql');\nimport { x } from '@strongroom/plugin-kv';\n");
      write('plugins/echo/src/db.ts', "const pg = await import('@strongroom/plugin-database-postgresql');\n");
      write('plugins/echo/dist/main.js', "require('@strongroom/sdk-plugin/host');\n");
      write('test/fixtures/echo-plugin/main.js', "const { serve } = require('@strongroom/sdk-plugin/host');\n");
      expect(boundaryViolations(root)).toEqual([
        'plugins/database-echo/src/main.ts: @strongroom/sdk-plugin/host',
        'plugins/database/src/builtins.ts: @strongroom/plugin-kv',
        'plugins/echo/src/backend.ts: ../../../core/src/x.js',
        'plugins/echo/src/backend.ts: @strongroom/core',
        'plugins/echo/src/backend.ts: @strongroom/sdk-plugin/database',
        'plugins/echo/src/backend.ts: @strongroom/sdk-plugin/dist/transport/codec.js',
        'plugins/echo/src/backend.ts: @strongroom/sdk-plugin/host',
        'plugins/echo/src/backend.ts: @strongroom/sdk-plugin/testing',
        "plugins/echo/src/backend.ts: const sdk = require(path.join(__dirname, '../../../sdk-plugin/dist/index.js'));",
        'plugins/echo/src/db.ts: @strongroom/plugin-database-postgresql',
        'test/fixtures/echo-plugin/main.js: @strongroom/sdk-plugin/host',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
