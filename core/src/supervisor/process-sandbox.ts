/**
 * How a plugin process is started isolated (docs/SECURITY.md): the permission-model
 * flags, the V8 flags, the environment it may see, the descriptors it inherits, and
 * what its early exit means. The supervisor (supervisor.ts) decides when to start one.
 */
import * as fs from 'node:fs';

/**
 * Variables passed through from the core's environment; everything else stays
 * out (no PATH: a plugin starts no process; HOME and TMPDIR are its run dir).
 */
export const PASS_ENV = ['TZ', 'LANG', 'LC_ALL'];

/**
 * The plugin sandbox (docs/SECURITY.md, "What a plugin can read, and why"):
 * Node's permission model, with
 *  - read access to exactly two paths: its one bundled file (its whole code,
 *    by real path) and its own run directory. Never a directory of the
 *    install: node checks a path as written, `..` resolved by text, so a
 *    symlink inside a granted directory (node_modules' workspace links) would
 *    lead the read anywhere. A file has nothing under it, and the run
 *    directory holds only what the plugin made there, which cannot be a link
 *    (the model refuses symlink() and link() without full access);
 *  - read and write access to its own run directory (0700, its sockets);
 *  - no child processes, no worker threads, no native addons, no inspector
 *    (none is granted; the model refuses them by default).
 * No built-in needs more: the database drivers (pg, mysql2) only open TCP
 * sockets, which the model does not restrict, and take credentials from the
 * connection config, never from files.
 */
export function sandboxFlags(main: string, runDir: string): string[] {
  // Its run dir is readable too: removing a stale socket there lstat()s it first.
  return ['--experimental-permission', '--disable-warning=ExperimentalWarning', `--allow-fs-read=${main}`, `--allow-fs-read=${runDir}`, `--allow-fs-write=${runDir}`];
}

/** Node's report of a read the sandbox refused (an uncaught ERR_ACCESS_DENIED), as it prints it on stderr. */
const DENIED_READ = /permission: 'FileSystemRead',\s*resource: '([^'\n]*)'/;

/**
 * Why a process ended before its handshake, for the operator: a plugin that
 * loads code beside its file (`require('./lib.js')`) is refused by the sandbox,
 * and says so only in node's error on its stderr.
 */
export function exitedBeforeHandshake(label: string, how: string, stderrTail: readonly string[]): string {
  const denied = DENIED_READ.exec(stderrTail.join('\n'))?.[1];
  if (denied !== undefined) {
    return `plugin ${label} exited (${how}) before its handshake: the sandbox refused to let it read ${denied}. A plugin may read only its own file, which the sha256 covers: build it into one bundled JavaScript file (the SDK README's esbuild command) and register that`;
  }
  return `plugin ${label} exited (${how}) before its handshake; see the server log`;
}

/**
 * V8 flags of every plugin process, each measured on idle RSS (`npm run bench -- --only
 * idle-memory`; a plugin is idle most of its life, with a heap of about 11 MB):
 *  - --max-semi-space-size=1: the young generation grown while modules load stays committed;
 *    capped at 1 MB it takes about 6 MB off each plugin. The price is paid under load: young-
 *    generation GC is about a quarter of the kv plugin's CPU under kv writes at c=32; 4 or 8 MB
 *    cut that plugin's CPU per write by about 20 % but added 21-22 MB to the idle total of seven
 *    engines read at 3 s (issue 20, same-minute A/B). Measured again with the settled reading
 *    (issue 31; main phases and idle-memory, three interleaved rounds at load 2.1-7.1, seven
 *    plugins' PSS summed, at 3 s -> settled): cap 1 MB 132.9-136.6 -> 107.6-110.5 MB; 4 MB
 *    158.1-161.9 -> 110.3-113.8; 8 MB 162.3-164.2 -> 111.4-112.3, but 130.4 in one run (transit and
 *    database not yet shrunk at 20 s); 8 MB with --min-semi-space-size=1 160.6-163.6 -> 108.3-111.7.
 *    The reducer's GC takes most of the growth back (about 0.4 MB per engine left), but not by a
 *    set time. The plugin's CPU per request, as a ratio to the core's in the same phase (the
 *    machine's load moved both by 2x between runs): kv write 0.68-0.75 at 1 MB (mean 0.71),
 *    0.64-0.80 at 4 (0.74), 0.61-0.72 at 8 (0.67), 0.61-0.70 at 8 with min 1 (0.66); kv read
 *    and transit encrypt alike within the noise. No drop the noise does not cover, so the 1 MB
 *    cap stays.
 *  - --compact-on-every-full-gc: the start-up mark-compact also compacts, so the old-space
 *    pages start-up garbage filled are given back at once (about 3 MB each), not 8 s or more
 *    later by the memory reducer. A full GC of a heap this small is a few ms, and rare.
 * Not kept: --v8-pool-size=1 (one V8 worker thread instead of four, about 1.3 MB less each) made
 * transit encrypt at c=1 about 5 % slower at the median (GC and compile work back on the main
 * thread; same-minute A/B), and c=1 latency is a target of its own. --lite-mode would take about 9 MB more each but gives up the optimizing compilers
 * (JavaScript crypto such as ssh's tweetnacl would crawl).
 * Measured again under PSS (issue 31; seven engines' settled PSS summed, interleaved runs at load
 * 9-12; baseline 119.1-122.6 MB in three runs, 130.0 in a fourth): --optimize-for-size 113.8-116.9 MB (about 0.8 MB each, and a
 * CPU price the loaded machine could not measure), --bytecode-old-age=1 115.9-120.7 MB and
 * --max-lazy 114.4-126.0 MB (both within the noise); none kept.
 */
export const PLUGIN_V8_FLAGS = ['--max-semi-space-size=1', '--compact-on-every-full-gc'];

/** How many descriptor numbers above the highest one open at spawn are also covered (files LevelDB opens meanwhile). */
const FD_HEADROOM = 64;
let devNull: number | null = null;

/**
 * The child's descriptors: its three pipes, and /dev/null over every other
 * number the core may hold. The core's LevelDB opens its files (LOG, LOCK, the
 * write-ahead log, MANIFEST) without close-on-exec, so a plain spawn handed
 * them to the plugin, which could append forged records to the core's log even
 * inside the sandbox (the permission model checks paths, not descriptors).
 * libuv dup2()s each stdio entry onto its number in the child before exec,
 * which closes whatever the core had there; Node's own descriptors are
 * close-on-exec anyway.
 */
export function sealedStdio(): Array<'pipe' | number> {
  let top = 2;
  try {
    for (const name of fs.readdirSync('/proc/self/fd')) top = Math.max(top, Number(name) || 0);
  } catch {
    // No /proc (not Linux): nothing to enumerate; Node's own descriptors are close-on-exec.
    return ['pipe', 'pipe', 'pipe'];
  }
  devNull ??= fs.openSync('/dev/null', 'r');
  const stdio: Array<'pipe' | number> = ['pipe', 'pipe', 'pipe'];
  for (let fd = 3; fd <= top + FD_HEADROOM; fd++) stdio.push(devNull);
  return stdio;
}
