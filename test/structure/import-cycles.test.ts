/**
 * No import cycle in core/, sdk-plugin/ or plugins/: between files (type-only
 * imports and `import('...')` types included) and between the core's modules.
 * The checker is scripts/import-cycles.js; the second test shows it sees the
 * kinds of import a cycle can hide in.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const { importGraph, stronglyConnected, findCycles } = require('../../scripts/import-cycles.js') as {
  importGraph(dirs: string[]): Map<string, Set<string>>;
  stronglyConnected(graph: Map<string, Set<string>>): string[][];
  findCycles(): string[][];
};

describe('import cycles', () => {
  it('there are none', () => {
    expect(findCycles()).toEqual([]);
  });

  it('type-only imports, re-exports and import() types count', () => {
    const dir = mkdtempSync(join(tmpdir(), 'strongroom-cycles-'));
    try {
      writeFileSync(join(dir, 'a.ts'), "import type { B } from './b.js';\nexport interface A { b: B }\n");
      writeFileSync(join(dir, 'b.ts'), "export interface B { a: import('./a.js').A }\n");
      writeFileSync(join(dir, 'c.ts'), "export type { D } from './d.js';\nexport interface C { n: number }\n");
      writeFileSync(join(dir, 'd.ts'), "import { type C } from './c.js';\nexport interface D { c: C }\n");
      writeFileSync(join(dir, 'e.ts'), "import type { A } from './a.js';\nexport type E = A;\n");
      const cycles = stronglyConnected(importGraph([dir])).map((c) => c.map((f) => f.slice(f.lastIndexOf('/') + 1)));
      expect(cycles.sort()).toEqual([['a.ts', 'b.ts'], ['c.ts', 'd.ts']]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
