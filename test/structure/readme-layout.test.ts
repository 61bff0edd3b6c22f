/**
 * The README's Layout section matches the tree: every top-level directory of
 * the repository and every module of the core (core/src/<module>) is named in
 * it, and nothing it names is gone. The project's docs also stand alone: none
 * cites the working notes outside the repository (seed/..., anchors/...).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const layout = readme.slice(readme.indexOf('## Layout'));
const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 }).split('\n');
/** The directories directly below `dir` that hold tracked files (hidden ones aside). */
const dirs = (dir: string) => {
  const prefix = dir === '.' ? '' : `${dir}/`;
  const below = tracked.filter((f) => f.startsWith(prefix) && f.slice(prefix.length).includes('/')).map((f) => f.slice(prefix.length).split('/')[0]!);
  return [...new Set(below)].filter((d) => !d.startsWith('.'));
};
/** The directories a table's first column names: `name/`, several per row with commas. */
const named = (table: string) => [...table.matchAll(/^\| ([^|]+) \|/gm)].flatMap((m) => [...m[1]!.matchAll(/`([\w.-]+)\/`/g)].map((n) => n[1]!));

describe('README layout', () => {
  const [top, core] = layout.split('The core\'s modules');
  it('names every top-level directory and nothing that is gone', () => {
    expect(named(top!).sort()).toEqual(dirs('.').sort());
  });

  it('names every module of the core and nothing that is gone', () => {
    expect(named(core!).sort()).toEqual(dirs('core/src').sort());
  });

  it('the docs cite nothing outside the repository', () => {
    const docs = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((f) => `docs/${f}`), ...['sdk-plugin', ...dirs('plugins').map((p) => `plugins/${p}`)].map((d) => `${d}/README.md`)];
    const citing = docs.filter((f) => existsSync(join(ROOT, f)) && /\b(seed|anchors)\/|\.\.\/shared\//.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(citing).toEqual([]);
  });
});
