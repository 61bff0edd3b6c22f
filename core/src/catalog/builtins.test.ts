/**
 * The built-in plugins come from the workspace's plugin packages: each declares
 * its catalog type, name and entry in its package.json (`strongroom`), and a
 * malformed declaration stops the server at start, naming the file and field.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { builtinPlugins } from './builtins.js';

const PLUGINS = resolve(__dirname, '../../../plugins');

describe('built-in plugins', () => {
  it('are every package under plugins/, as its manifest declares, run from the bundle of its bin', () => {
    const builtins = builtinPlugins();
    const packages = readdirSync(PLUGINS).filter((d) => readdirSync(join(PLUGINS, d)).includes('package.json'));
    expect(builtins.map((b) => b.main).sort()).toEqual(packages.map((d) => join(PLUGINS, d, 'dist/plugin.js')).sort());
    for (const d of packages) {
      const pkg = JSON.parse(readFileSync(join(PLUGINS, d, 'package.json'), 'utf8')) as { bin: Record<string, string>; strongroom: { entry: string } };
      expect(Object.values(pkg.bin)).toContain(pkg.strongroom.entry);
    }
    for (const b of builtins) expect(b.version).toBe('v0.1.0+builtin');
    const byName = Object.fromEntries(builtins.map((b) => [b.name, b.type]));
    expect(byName).toMatchObject({ kv: 'secret', transit: 'secret', approle: 'auth', 'postgresql-database-plugin': 'database', 'mysql-database-plugin': 'database' });
  });

  it('skip a package without a manifest and refuse a malformed one, naming it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sr-builtins-'));
    try {
      const pkg = (name: string, manifest: unknown) => {
        mkdirSync(join(dir, name));
        writeFileSync(join(dir, name, 'package.json'), JSON.stringify({ name, ...(manifest === undefined ? {} : { strongroom: manifest }) }));
      };
      pkg('helper', undefined);
      pkg('good', { type: 'secret', name: 'good', entry: 'dist/main.js' });
      expect(builtinPlugins(dir).map((b) => [b.name, b.main])).toEqual([['good', join(dir, 'good', 'dist/plugin.js')]]);
      pkg('bad', { type: 'engine', name: 'bad', entry: 'dist/main.js' });
      expect(() => builtinPlugins(dir)).toThrow(/bad\/package\.json: strongroom\.type: /);
      rmSync(join(dir, 'bad'), { recursive: true });
      pkg('escape', { type: 'secret', name: 'escape', entry: '../good/dist/main.js' });
      expect(() => builtinPlugins(dir)).toThrow(/escape\/package\.json: strongroom\.entry: must stay inside the package/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
