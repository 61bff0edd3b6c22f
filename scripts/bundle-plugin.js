#!/usr/bin/env node
/**
 * Builds a plugin into ONE JavaScript file: its code, the SDK, every
 * dependency it loads and the wire contract (docs/SECURITY.md, "What a plugin
 * can read, and why"). The plugin sandbox grants a plugin read access to that
 * file alone, so the file is everything the process runs, and an external
 * plugin's sha256 covers all of it.
 *
 * Run by `npm run build` (after tsc): bundles each built-in's compiled entry
 * (its package.json's `strongroom.entry`) into `plugins/<name>/dist/plugin.js`,
 * which the core runs (core/src/catalog/builtins.ts). Tests bundle their external
 * plugins with `bundlePlugin`. esbuild only; nothing is fetched.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const esbuild = require('esbuild');

/**
 * Drivers that knex (and pg) name for dialects and features a plugin may not
 * use: left out of a bundle unless the plugin depends on the package. They are
 * only loaded when that dialect is chosen, which a plugin that does not depend
 * on them never does; in the sandbox such a load fails like any read outside
 * the bundle.
 */
const OPTIONAL_DRIVERS = ['better-sqlite3', 'mariadb', 'mysql', 'mysql2', 'oracledb', 'pg', 'pg-native', 'pg-query-stream', 'sqlite3', 'tedious'];

/**
 * zod's `locales` namespace: its error messages in some fifty languages (about 360 KB of a
 * 1.4 MB bundle), loaded into every plugin process at start though no plugin calls
 * `z.locales.*` (English, the default, comes from its own module). A built-in's bundle gets an
 * empty namespace instead (issue 31). esbuild's synchronous build takes no plugins, so a test's
 * bundle (bundlePlugin) keeps them; nothing else differs.
 */
const zodWithoutLocales = {
  name: 'zod-without-locales',
  setup(build) {
    const inZod = `${path.sep}node_modules${path.sep}zod${path.sep}`;
    build.onResolve({ filter: /^\.\.\/locales\/index\.c?js$/ }, (args) => (args.importer.includes(inZod) ? { path: 'zod-locales', namespace: 'zod-without-locales' } : undefined));
    build.onLoad({ filter: /.*/, namespace: 'zod-without-locales' }, () => ({ contents: 'module.exports = {};', loader: 'js' }));
  },
};

/**
 * The `dependencies` of the package that holds `file` (its nearest
 * package.json) and of the workspace packages (`@strongroom/...`) it depends
 * on, theirs included: the database engine bundles the built-in database
 * plugins, and with them their drivers.
 */
function dependenciesOf(file) {
  const depsOf = (pkg) => Object.keys(JSON.parse(fs.readFileSync(pkg, 'utf8')).dependencies ?? {});
  const all = new Set();
  const visit = (pkg) => {
    for (const d of depsOf(pkg)) {
      if (all.has(d)) continue;
      all.add(d);
      const workspace = path.join(ROOT, 'node_modules', d, 'package.json');
      if (d.startsWith('@strongroom/') && fs.existsSync(workspace)) visit(workspace);
    }
  };
  for (let dir = path.dirname(path.resolve(file)); ; dir = path.dirname(dir)) {
    const pkg = path.join(dir, 'package.json');
    if (fs.existsSync(pkg)) {
      visit(pkg);
      return [...all];
    }
    if (path.dirname(dir) === dir) return [];
  }
}

/**
 * The options every plugin bundle is built with (the SDK README's command
 * line, as an API call). With `prelude`, the bundle runs that code first and
 * then the entry (a test's wrapper around a plugin).
 */
function bundleOptions(entry, outfile, prelude) {
  const dependencies = dependenciesOf(entry);
  return {
    ...(prelude === undefined
      ? { entryPoints: [entry] }
      : { stdin: { contents: `${prelude}\nrequire(${JSON.stringify(path.resolve(entry))});\n`, resolveDir: path.dirname(path.resolve(entry)), sourcefile: 'prelude.js' } }),
    outfile,
    absWorkingDir: ROOT,
    bundle: true,
    platform: 'node',
    target: 'node20',
    // The process holds its whole source in memory: without whitespace and with shorter syntax it takes less
    // than the files it replaced did (names are kept, so stack traces still name functions).
    minifyWhitespace: true,
    minifySyntax: true,
    external: OPTIONAL_DRIVERS.filter((d) => !dependencies.includes(d)),
    logLevel: 'warning',
  };
}

/**
 * Escapes every non-ASCII character of a bundle as \uXXXX. One such character
 * anywhere makes V8 hold the whole source (1.5 MB and more) as a two-byte
 * string, twice the memory, for the life of the process; esbuild's ASCII
 * output escapes strings but leaves regular expression literals as written
 * (the SDK's duration pattern has "µs"). The escape means the same character
 * in a string, template, regular expression or identifier.
 */
function asciiOnly(file) {
  const text = fs.readFileSync(file, 'utf8');
  if (!/[^\x00-\x7f]/.test(text)) return;
  fs.writeFileSync(file, text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}

/** Bundles `entry` (a .js or .ts file) into the single file `outfile`, optionally after `opts.prelude` (code run first). */
function bundlePlugin(entry, outfile, opts = {}) {
  esbuild.buildSync(bundleOptions(entry, outfile, opts.prelude));
  asciiOnly(outfile);
  return outfile;
}

/**
 * Every built-in: a package under plugins/ whose package.json declares one
 * (`strongroom`, read and checked by core/src/catalog/builtins.ts), with the
 * compiled entry it names.
 */
function builtinPackages() {
  const dir = path.join(ROOT, 'plugins');
  const out = [];
  for (const name of fs.readdirSync(dir)) {
    const file = path.join(dir, name, 'package.json');
    if (!fs.existsSync(file)) continue;
    const manifest = JSON.parse(fs.readFileSync(file, 'utf8')).strongroom;
    if (manifest?.entry) out.push({ dir: path.join(dir, name), entry: path.join(dir, name, manifest.entry) });
  }
  return out;
}

/**
 * Whether `outfile` is newer than every file its last build read (listed in
 * `inputsFile`, with this script): the build runs often and the machine is
 * small, so an unchanged plugin is not bundled again. A changed, added
 * (imported by a changed file) or removed input rebuilds it.
 */
function upToDate(outfile, inputsFile) {
  try {
    const built = fs.statSync(outfile).mtimeMs;
    const inputs = JSON.parse(fs.readFileSync(inputsFile, 'utf8'));
    return inputs.every((f) => fs.statSync(path.resolve(ROOT, f)).mtimeMs <= built);
  } catch {
    return false;
  }
}

async function bundleBuiltins() {
  await Promise.all(
    builtinPackages().map(async ({ dir, entry }) => {
      const outfile = path.join(dir, 'dist', 'plugin.js');
      const inputsFile = path.join(dir, 'dist', 'plugin.inputs.json');
      if (upToDate(outfile, inputsFile)) return;
      const { metafile } = await esbuild.build({ ...bundleOptions(entry, outfile), plugins: [zodWithoutLocales], metafile: true });
      asciiOnly(outfile);
      // This script is an input too: changed bundle options rebuild every plugin.
      fs.writeFileSync(inputsFile, `${JSON.stringify([path.relative(ROOT, __filename), ...Object.keys(metafile.inputs)])}\n`);
    }),
  );
}

if (require.main === module) {
  bundleBuiltins().catch((err) => {
    process.stderr.write(`bundling the built-in plugins failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}

module.exports = { bundlePlugin };
