#!/usr/bin/env node
/**
 * Import cycles between the TypeScript sources of the workspaces (core,
 * sdk-plugin, plugins/*): every static import and re-export, `import type`
 * included, `import('...')` calls and `import('...').T` type references, as
 * the TypeScript compiler's own pre-processor reads them. Only relative
 * specifiers are followed: a cycle across packages cannot exist (the
 * packages build in project-reference order, which tsc keeps acyclic).
 *
 * The core's top-level folders (mounts/, request/, seal/, ...) are its
 * modules: no two of them may import each other either, through any files
 * (tests excluded: a test may reach wherever it needs).
 * Usage: node scripts/import-cycles.js  -> prints each cycle, exits 1 if any.
 */
'use strict';
const { existsSync, readdirSync, readFileSync } = require('node:fs');
const { dirname, join, relative, resolve } = require('node:path');
const ts = require('typescript');

const ROOT = join(__dirname, '..');
const SOURCE_DIRS = () => [
  join(ROOT, 'core/src'),
  join(ROOT, 'sdk-plugin/src'),
  ...readdirSync(join(ROOT, 'plugins'))
    .map((p) => join(ROOT, 'plugins', p, 'src'))
    .filter((d) => existsSync(d)),
];

function sourceFiles(dir, out = []) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && e.name !== 'dist') sourceFiles(p, out);
    } else if (/\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** `./x.js` (NodeNext spelling) -> the .ts file it compiles from; null when it is not a source file here. */
function resolveRelative(from, spec) {
  if (!spec.startsWith('.')) return null;
  const base = resolve(dirname(from), spec);
  const stem = base.replace(/\.(c|m)?js$/, '');
  for (const cand of [`${stem}.ts`, `${stem}.tsx`, join(base, 'index.ts')]) if (existsSync(cand)) return cand;
  return null;
}

/** The import graph: file -> files it imports. */
function importGraph(dirs = SOURCE_DIRS()) {
  const graph = new Map();
  for (const dir of dirs) {
    for (const file of sourceFiles(dir)) {
      const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
      const deps = new Set();
      for (const ref of info.importedFiles) {
        const target = resolveRelative(file, ref.fileName);
        if (target) deps.add(target);
      }
      graph.set(file, deps);
    }
  }
  return graph;
}

/** The core's module graph: core/src/<module>/... -> the other modules its non-test files import. */
function coreModuleGraph(graph = importGraph()) {
  const core = join(ROOT, 'core/src');
  const moduleOf = (f) => {
    const rel = relative(core, f);
    return rel.startsWith('..') || !rel.includes('/') ? null : join(core, rel.slice(0, rel.indexOf('/')));
  };
  const modules = new Map();
  for (const [file, deps] of graph) {
    const from = moduleOf(file);
    if (!from || file.endsWith('.test.ts')) continue;
    if (!modules.has(from)) modules.set(from, new Set());
    for (const d of deps) {
      const to = moduleOf(d);
      if (to && to !== from) modules.get(from).add(to);
    }
  }
  return modules;
}

/** Strongly connected components of more than one node (or a node importing itself): Tarjan's algorithm. */
function stronglyConnected(graph) {
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const cycles = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const scc = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || graph.get(v)?.has(v)) cycles.push(scc.map((f) => relative(ROOT, f)).sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return cycles;
}

/** Every cycle: between files anywhere, and between the core's modules. */
function findCycles() {
  const graph = importGraph();
  return [...stronglyConnected(graph), ...stronglyConnected(coreModuleGraph(graph)).map((c) => c.map((m) => `${m}/`))];
}

module.exports = { importGraph, stronglyConnected, findCycles };

if (require.main === module) {
  const cycles = findCycles();
  for (const c of cycles) process.stdout.write(`cycle: ${c.join(' <-> ')}\n`);
  process.stdout.write(`${cycles.length} import cycle(s)\n`);
  process.exit(cycles.length ? 1 : 0);
}
