/**
 * No dead code: knip (configured in knip.jsonc) reports no unused file, barrel, export,
 * dependency or unlisted dependency anywhere in the workspaces. The SDK's published entry
 * points (package.json "exports") count as used. The second test shows the check sees what
 * it must, on a small project of its own with the same rules.
 *   Alone: npx knip
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');
// knip's package exports do not expose its bin; it is a root devDependency, so it sits here.
const KNIP = join(ROOT, 'node_modules', 'knip', 'bin', 'knip.js');

interface KnipIssue {
  file: string;
  files: { name: string }[];
  exports: { name: string }[];
  types: { name: string }[];
  [kind: string]: unknown;
}

/** knip's findings for a directory, one line per finding ("kind file name"). */
function findings(dir: string): string[] {
  let out: string;
  try {
    out = execFileSync(process.execPath, [KNIP, '--no-progress', '--reporter', 'json', '--directory', dir], { encoding: 'utf8', maxBuffer: 16 << 20 });
  } catch (err) {
    // knip exits 1 when it found something; its report is still on stdout.
    out = (err as { stdout?: string }).stdout ?? '';
    if (out.trim() === '') throw err;
  }
  const lines: string[] = [];
  for (const issue of (JSON.parse(out) as { issues: KnipIssue[] }).issues) {
    for (const [kind, items] of Object.entries(issue)) {
      if (!Array.isArray(items)) continue;
      for (const item of items as { name: string }[]) lines.push(`${kind} ${issue.file} ${item.name}`);
    }
  }
  return lines.sort();
}

describe('unused code', () => {
  it('there is none', () => {
    expect(findings(ROOT)).toEqual([]);
  }, 120_000);

  it('an unused value export, an unused barrel and an unused file are found; a type a signature uses is not', () => {
    const dir = mkdtempSync(join(tmpdir(), 'strongroom-knip-'));
    try {
      mkdirSync(join(dir, 'src'));
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'probe', private: true }));
      writeFileSync(
        join(dir, 'knip.json'),
        JSON.stringify({ ignoreExportsUsedInFile: { interface: true, type: true }, entry: ['src/index.ts'], project: ['src/**/*.ts'] }),
      );
      writeFileSync(join(dir, 'src', 'index.ts'), "import { used, make } from './lib.js';\nconsole.log(used(), make());\n");
      writeFileSync(
        join(dir, 'src', 'lib.ts'),
        [
          'export function used() { return helper(); }',
          'export function helper() { return 1; }',
          'export const dead = 2;',
          'export interface Shape { a: number }',
          'export function make(): Shape { return { a: 1 }; }',
        ].join('\n'),
      );
      writeFileSync(join(dir, 'src', 'barrel.ts'), "export * from './lib.js';\n");
      expect(findings(dir)).toEqual(['exports src/lib.ts dead', 'exports src/lib.ts helper', 'files src/barrel.ts src/barrel.ts']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
