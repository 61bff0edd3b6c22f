/**
 * package-lock.json is what a fresh `npm install` writes, so installing a clean
 * checkout leaves `git status` clean. Two ways it drifted: npm drops the other
 * platforms' optional bindings (oxc-parser's, unrs-resolver's) when it rewrites
 * a lock over an existing node_modules (npm/cli#4828), and a fresh install puts
 * them back; and a workspace added, or its manifest edited, without `npm
 * install` leaves its lock entry missing or stale. After changing a dependency, regenerate the lock from a
 * tree without any node_modules directory, then `npm install`.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');

interface LockEntry {
  name?: string;
  version?: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  bin?: Record<string, string>;
  link?: boolean;
}

const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };

/** Where npm resolves `dep` from the package at `from`: its own node_modules, then each ancestor's. */
function resolvedEntry(from: string, dep: string): string | undefined {
  let dir = from;
  for (;;) {
    const key = dir ? `${dir}/node_modules/${dep}` : `node_modules/${dep}`;
    if (lock.packages[key]) return key;
    if (!dir) return undefined;
    const at = dir.lastIndexOf('/node_modules/');
    dir = at < 0 ? '' : dir.slice(0, at);
  }
}

/** npm writes a workspace's dependency maps sorted: compare without key order. */
const canonical = (v: unknown): string => JSON.stringify(v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v);

describe('package-lock.json', () => {
  it('holds every optional dependency it names, for every platform', () => {
    const missing: string[] = [];
    for (const [key, entry] of Object.entries(lock.packages)) {
      for (const dep of Object.keys(entry.optionalDependencies ?? {})) {
        if (!resolvedEntry(key, dep)) missing.push(`${key || '(root)'} -> ${dep}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('has an entry and a link for every workspace', () => {
    const globs = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { workspaces: string[] }).workspaces;
    const dirs = globs.flatMap((g) =>
      g.endsWith('/*') ? readdirSync(join(ROOT, g.slice(0, -2))).map((d) => `${g.slice(0, -2)}/${d}`).filter((d) => existsSync(join(ROOT, d, 'package.json'))) : [g],
    );
    const missing: string[] = [];
    for (const dir of dirs) {
      const name = (JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as LockEntry).name;
      if (!lock.packages[dir]) missing.push(dir);
      if (lock.packages[`node_modules/${name}`]?.link !== true) missing.push(`node_modules/${name}`);
    }
    expect(missing).toEqual([]);
  });

  it("matches every workspace's package.json", () => {
    const stale: string[] = [];
    for (const [key, entry] of Object.entries(lock.packages)) {
      if (key.includes('node_modules') || entry.link) continue;
      const manifest = JSON.parse(readFileSync(join(ROOT, key, 'package.json'), 'utf8')) as LockEntry;
      for (const field of ['name', 'version', 'dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies', 'bin'] as const) {
        if (canonical(manifest[field]) !== canonical(entry[field])) stale.push(`${key || '(root)'}: ${field}`);
      }
    }
    expect(stale).toEqual([]);
  });
});
