/**
 * The workspace is described once: the build (tsconfig.json's references)
 * names every TypeScript package of the workspaces and of test/fixtures (but
 * the web UI, which Vite builds), and
 * every plugin package declares its built-in catalog entry in its package.json
 * (core/src/catalog/builtins.ts reads it), so adding an engine is adding its
 * package and one reference, and forgetting either fails here.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');
const json = <T>(file: string): T => JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as T;
const below = (dir: string) => readdirSync(join(ROOT, dir)).map((d) => `${dir}/${d}`);

describe('workspace structure', () => {
  it('tsconfig.json references exactly the TypeScript packages', () => {
    const globs = json<{ workspaces: string[] }>('package.json').workspaces;
    const dirs = [...globs.flatMap((g) => (g.endsWith('/*') ? below(g.slice(0, -2)) : [g])), ...below('test/fixtures')];
    // A package whose tsconfig emits nothing (the web UI: Vite bundles it, its own build type-checks it) is not tsc -b's.
    const built = (d: string) => existsSync(join(ROOT, d, 'tsconfig.json')) && json<{ compilerOptions?: { noEmit?: boolean } }>(`${d}/tsconfig.json`).compilerOptions?.noEmit !== true;
    const packages = dirs.filter(built).sort();
    const references = json<{ references: Array<{ path: string }> }>('tsconfig.json').references.map((r) => r.path).sort();
    expect(references).toEqual(packages);
  });

  it('every plugin package declares its built-in entry, run from its bin', () => {
    const undeclared: string[] = [];
    for (const dir of below('plugins').filter((d) => existsSync(join(ROOT, d, 'package.json')))) {
      const pkg = json<{ bin?: Record<string, string>; strongroom?: { entry?: string } }>(`${dir}/package.json`);
      if (!pkg.strongroom || !Object.values(pkg.bin ?? {}).includes(pkg.strongroom.entry ?? '')) undeclared.push(dir);
    }
    expect(undeclared).toEqual([]);
  });
});
