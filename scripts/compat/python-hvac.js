'use strict';
/**
 * Finds a Python 3 that can `import hvac` for the compatibility suite
 * (test/compat/hvac.test.ts), installing Debian's python3-hvac when it is
 * missing (as root, with apt-get; a library, so no service starts), and a
 * plain Python 3 for the CLI's pseudo-terminal tests (test/helpers/cli.ts).
 * Each returns { python } or { reason } saying why it cannot be had.
 */
const { spawnSync } = require('node:child_process');

const CANDIDATES = ['/usr/bin/python3', 'python3'];

function runs(python, code) {
  return spawnSync(python, ['-c', code], { stdio: 'ignore', timeout: 30_000 }).status === 0;
}

/** The first candidate that runs `code`, installing the Debian package `pkg` when none does. */
function ensure(pkg, code) {
  const find = () => CANDIDATES.find((p) => runs(p, code)) ?? null;
  const found = find();
  if (found) return { python: found };
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const hasApt = spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0;
  if (!isRoot || !hasApt) return { reason: `${pkg} is not installed and cannot be installed here (${!hasApt ? 'no apt-get' : 'not root'})` };
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  process.stderr.write(`[compat] installing ${pkg} (apt-get)\n`);
  let r = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', pkg], { env, encoding: 'utf8', timeout: 600_000 });
  if (r.status !== 0) {
    spawnSync('apt-get', ['update'], { env, stdio: 'ignore', timeout: 600_000 });
    r = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', pkg], { env, encoding: 'utf8', timeout: 600_000 });
  }
  const after = find();
  if (after) return { python: after };
  return { reason: `installing ${pkg} failed: ${(r.stderr || r.stdout || '').trim().split('\n').slice(-3).join(' | ')}` };
}

const ensurePythonHvac = () => ensure('python3-hvac', 'import hvac');
const ensurePython3 = () => ensure('python3', 'import pty');

module.exports = { ensurePythonHvac, ensurePython3 };
