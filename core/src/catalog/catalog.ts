/**
 * The plugin catalog: which command runs for a (type, name, version).
 *
 * Security invariants:
 *  - an external plugin's command is a file inside `plugin_directory` (after
 *    resolving symlinks); no directory configured means no external plugins;
 *  - its sha256 is checked, in constant time, before EVERY process start
 *    (`prepareStart`), so a swapped binary never runs;
 *  - every plugin, built-in or external, is ONE JavaScript file holding all
 *    the code it runs (scripts/bundle-plugin.js): the sandbox lets the process
 *    read that file and nothing else of the install, so the sha256 covers
 *    everything an external plugin executes and a `require('./lib.js')` beside
 *    it fails;
 *  - built-ins are entries too (version `vX.Y.Z+builtin`), run with the
 *    server's own node binary and never persisted.
 * External entries persist under `core/plugin-catalog/<type>/<name>/<version>`
 * (a barrier-backed store, so they are encrypted at rest).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { badRequest, notFound, StrongroomError, type BackendType } from '@strongroom/sdk-plugin/host';

const CATALOG_PREFIX = 'core/plugin-catalog/';
const PLUGIN_TYPES = ['secret', 'auth', 'database'] as const satisfies readonly BackendType[];

export interface PluginEntry {
  type: BackendType;
  name: string;
  /** Canonical, with a leading "v" ("v1.2.3", "v0.1.0+builtin"). */
  version: string;
  /** Built-ins: the node binary. External: a file name relative to plugin_directory. */
  command: string;
  args: string[];
  /** "KEY=VALUE" strings added to the process environment. */
  env: string[];
  /** Lower-case hex; empty for built-ins. */
  sha256: string;
  builtin: boolean;
}

export interface BuiltinPlugin {
  type: BackendType;
  name: string;
  /** Must end in "+builtin" ("v0.1.0+builtin"); a leading "v" is added when missing. */
  version: string;
  /** Absolute path of the plugin's one bundled file (its whole code: the sandbox's only read grant). */
  main: string;
  env?: string[];
}

export interface RegisterInput {
  type: string;
  name: string;
  version: string;
  command: string;
  args?: string[];
  env?: string[];
  sha256: string;
}

/**
 * What the supervisor runs: the plugin's one JavaScript file (its real path,
 * sha256-checked for an external plugin), which the server's own node binary
 * runs in the plugin sandbox with read access to that file only; its args and
 * extra env.
 */
export interface StartSpec {
  main: string;
  args: string[];
  env: Record<string, string>;
}

/** An external plugin is one bundled JavaScript file: only node code can be held by the sandbox (Node's permission model). */
const JS_ENTRY = /\.(c|m)?js$/;

export interface CatalogStore {
  get(key: string): Promise<Uint8Array | null>;
  put(key: string, value: Uint8Array): Promise<void>;
  delete(key: string): Promise<void>;
  list(prefix: string): Promise<string[]>;
}

export interface PluginCatalog {
  register(input: RegisterInput): Promise<PluginEntry>;
  /**
   * Resolves a plugin. With a version: that exact external version, else the
   * built-in when the version is the built-in's. Without: the built-in when
   * there is one, else the highest registered semver.
   */
  get(type: BackendType, name: string, version?: string): Promise<PluginEntry | null>;
  list(type?: BackendType): Promise<PluginEntry[]>;
  remove(type: BackendType, name: string, version: string): Promise<void>;
  /** Checks the sha256 of the command file and resolves what to run. Call before every start. */
  prepareStart(entry: PluginEntry): Promise<StartSpec>;
}

const SEMVER = /^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const ENV_ITEM = /^[A-Za-z_][A-Za-z0-9_]*=/;
/** Node reads these itself (NODE_OPTIONS can grant --allow-child-process): never set by a catalog entry. */
export const NODE_ENV_ITEM = /^NODE_/i;

const registerSchema = z.object({
  type: z.enum(PLUGIN_TYPES),
  name: z.string().regex(NAME, 'must be letters, digits, ".", "_" or "-"'),
  version: z.string().regex(SEMVER, 'must be a semantic version (v1.2.3)'),
  command: z.string().min(1, 'is required'),
  args: z.array(z.string()).default([]),
  env: z
    .array(z.string().regex(ENV_ITEM, 'must be KEY=VALUE').refine((e) => !NODE_ENV_ITEM.test(e), 'NODE_* variables are not allowed: they would change the plugin sandbox'))
    .default([]),
  sha256: z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex characters'),
});

export const isSemver = (version: string): boolean => SEMVER.test(version);

/** "1.2.3" -> "v1.2.3"; throws a 400 naming the field on anything that is not semver. */
export function canonicalVersion(version: string): string {
  if (!SEMVER.test(version)) throw badRequest(`version: "${version}" is not a semantic version`, ['version']);
  return version.startsWith('v') ? version : `v${version}`;
}

/** Semver precedence (build metadata ignored). */
export function compareVersions(a: string, b: string): number {
  const pa = SEMVER.exec(a);
  const pb = SEMVER.exec(b);
  if (!pa || !pb) return a < b ? -1 : a > b ? 1 : 0;
  for (let i = 1; i <= 3; i++) {
    const d = Number(pa[i]) - Number(pb[i]);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  const ra = pa[4];
  const rb = pb[4];
  if (ra === rb) return 0;
  if (ra === undefined) return 1;
  if (rb === undefined) return -1;
  const xa = ra.split('.');
  const xb = rb.split('.');
  for (let i = 0; i < Math.max(xa.length, xb.length); i++) {
    const x = xa[i];
    const y = xb[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    const nx = /^\d+$/.test(x);
    const ny = /^\d+$/.test(y);
    if (nx && ny && Number(x) !== Number(y)) return Number(x) < Number(y) ? -1 : 1;
    if (nx !== ny) return nx ? -1 : 1;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

function sha256File(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    fs.createReadStream(file)
      .on('error', reject)
      .on('data', (chunk) => h.update(chunk))
      .on('end', () => resolve(h.digest('hex')));
  });
}

export function createPluginCatalog(deps: { store: CatalogStore; pluginDirectory: string | null; builtins: BuiltinPlugin[] }): PluginCatalog {
  const { store } = deps;
  const builtins = new Map<string, PluginEntry>();
  for (const b of deps.builtins) {
    const version = canonicalVersion(b.version);
    if (!version.endsWith('+builtin')) throw new Error(`built-in ${b.name} version ${version} must end in +builtin`);
    builtins.set(`${b.type}/${b.name}`, {
      type: b.type,
      name: b.name,
      version,
      command: process.execPath,
      args: [path.resolve(b.main)],
      env: b.env ?? [],
      sha256: '',
      builtin: true,
    });
  }

  const keyOf = (type: string, name: string, version: string) => `${CATALOG_PREFIX}${type}/${name}/${version}`;

  const readEntry = async (key: string): Promise<PluginEntry | null> => {
    const raw = await store.get(key);
    return raw === null ? null : (JSON.parse(Buffer.from(raw).toString('utf8')) as PluginEntry);
  };

  const externalVersions = async (type: string, name: string): Promise<string[]> =>
    (await store.list(`${CATALOG_PREFIX}${type}/${name}/`)).filter((v) => !v.endsWith('/'));

  /** Absolute path of an external command, refusing anything outside plugin_directory. */
  const resolveCommand = (command: string): string => {
    if (!deps.pluginDirectory) {
      throw badRequest('command: no plugin_directory is configured; external plugins cannot be registered', ['command']);
    }
    const dir = fs.realpathSync(deps.pluginDirectory);
    if (path.isAbsolute(command)) throw badRequest('command: must be a file name inside plugin_directory', ['command']);
    const joined = path.resolve(dir, command);
    let real: string;
    try {
      real = fs.realpathSync(joined);
    } catch {
      throw badRequest(`command: "${command}" does not exist in plugin_directory`, ['command']);
    }
    if (!real.startsWith(dir + path.sep)) throw badRequest('command: must stay inside plugin_directory', ['command']);
    if (!fs.statSync(real).isFile()) throw badRequest(`command: "${command}" is not a file`, ['command']);
    return real;
  };

  // At registration a mismatch is the caller's bad input (400); at start it means the file changed (502).
  const checkSha = async (file: string, expected: string, label: string, atRegistration = false) => {
    const actual = Buffer.from(await sha256File(file), 'hex');
    const want = Buffer.from(expected, 'hex');
    if (want.length !== actual.length || !timingSafeEqual(want, actual)) {
      if (atRegistration) throw badRequest(`sha256: does not match the command file for ${label}`, ['sha256']);
      throw new StrongroomError('plugin_failed', `plugin sha256 mismatch for ${label}`);
    }
  };

  return {
    async register(input) {
      const parsed = registerSchema.safeParse(input);
      if (!parsed.success) {
        const details = parsed.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`);
        throw badRequest(details[0] ?? 'invalid plugin registration', details);
      }
      const p = parsed.data;
      const version = canonicalVersion(p.version);
      if (version.includes('+builtin')) throw badRequest('version: the "+builtin" suffix is reserved for built-in plugins', ['version']);
      const file = resolveCommand(p.command);
      if (!JS_ENTRY.test(file)) throw badRequest(`command: "${p.command}" is not a JavaScript entry file (.js, .cjs, .mjs); a plugin is one bundled JavaScript file, run in the server's node sandbox`, ['command']);
      const sha256 = p.sha256.toLowerCase();
      await checkSha(file, sha256, `${p.name} ${version}`, true);
      const entry: PluginEntry = { type: p.type, name: p.name, version, command: p.command, args: p.args, env: p.env, sha256, builtin: false };
      await store.put(keyOf(p.type, p.name, version), Buffer.from(JSON.stringify(entry), 'utf8'));
      return entry;
    },

    async get(type, name, version) {
      const builtin = builtins.get(`${type}/${name}`) ?? null;
      if (version !== undefined && version !== '') {
        const v = canonicalVersion(version);
        if (builtin && builtin.version === v) return builtin;
        return readEntry(keyOf(type, name, v));
      }
      if (builtin) return builtin;
      const versions = await externalVersions(type, name);
      if (versions.length === 0) return null;
      const highest = versions.sort(compareVersions)[versions.length - 1] as string;
      return readEntry(keyOf(type, name, highest));
    },

    async list(type) {
      const out: PluginEntry[] = [...builtins.values()].filter((b) => !type || b.type === type);
      for (const t of type ? [type] : PLUGIN_TYPES) {
        for (const nameDir of await store.list(`${CATALOG_PREFIX}${t}/`)) {
          if (!nameDir.endsWith('/')) continue;
          const name = nameDir.slice(0, -1);
          for (const v of await externalVersions(t, name)) {
            const e = await readEntry(keyOf(t, name, v));
            if (e) out.push(e);
          }
        }
      }
      return out.sort((a, b) => a.type.localeCompare(b.type) || a.name.localeCompare(b.name) || compareVersions(a.version, b.version));
    },

    async remove(type, name, version) {
      const v = canonicalVersion(version);
      if (builtins.get(`${type}/${name}`)?.version === v) throw badRequest(`cannot remove built-in plugin ${name} ${v}`);
      const key = keyOf(type, name, v);
      if ((await store.get(key)) === null) throw notFound(`plugin ${type}/${name} ${v} is not registered`);
      await store.delete(key);
    },

    async prepareStart(entry) {
      const env: Record<string, string> = {};
      for (const item of entry.env) {
        const i = item.indexOf('=');
        if (i > 0) env[item.slice(0, i)] = item.slice(i + 1);
      }
      if (entry.builtin) {
        const [main, ...args] = entry.args;
        // Its real path: the sandbox's grant must name the file node actually opens, not a link to it.
        let real: string;
        try {
          real = fs.realpathSync(main!);
        } catch {
          throw new StrongroomError('plugin_failed', `built-in plugin ${entry.name}: its bundled file ${main} is missing (npm run build makes it)`);
        }
        return { main: real, args, env };
      }
      const file = resolveCommand(entry.command);
      if (!JS_ENTRY.test(file)) {
        throw badRequest(`command: plugin ${entry.name} ${entry.version}: "${entry.command}" is not a JavaScript entry file (.js, .cjs, .mjs); a plugin is one bundled JavaScript file, run in the server's node sandbox`, ['command']);
      }
      await checkSha(file, entry.sha256, `${entry.name} ${entry.version}`);
      return { main: file, args: entry.args, env };
    },
  };
}
