'use strict';
/**
 * Finds a Python 3 that can `import hvac` for the compatibility suite
 * (test/compat/hvac.test.ts), installing Debian's python3-hvac when it is
 * missing (as root, with apt-get; a library, so no service starts). Returns
 * { python } or { reason } saying why Python with hvac cannot be had.
 */
const { spawnSync } = require('node:child_process');

const CANDIDATES = ['/usr/bin/python3', 'python3'];

function importsHvac(python) {
  const r = spawnSync(python, ['-c', 'import hvac'], { stdio: 'ignore', timeout: 30_000 });
  return r.status === 0;
}

function find() {
  for (const p of CANDIDATES) if (importsHvac(p)) return p;
  return null;
}

function ensurePythonHvac() {
  const found = find();
  if (found) return { python: found };
  const hasPython = CANDIDATES.some((p) => spawnSync(p, ['--version'], { stdio: 'ignore' }).status === 0);
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const hasApt = spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0;
  if (!isRoot || !hasApt) {
    return { reason: `python3-hvac is not installed and cannot be installed here (${!hasApt ? 'no apt-get' : 'not root'}${hasPython ? '' : '; no python3 either'})` };
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  process.stderr.write('[compat] installing python3-hvac (apt-get)\n');
  let r = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'python3-hvac'], { env, encoding: 'utf8', timeout: 600_000 });
  if (r.status !== 0) {
    spawnSync('apt-get', ['update'], { env, stdio: 'ignore', timeout: 600_000 });
    r = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'python3-hvac'], { env, encoding: 'utf8', timeout: 600_000 });
  }
  const after = find();
  if (after) return { python: after };
  return { reason: `installing python3-hvac failed: ${(r.stderr || r.stdout || '').trim().split('\n').slice(-3).join(' | ')}` };
}

module.exports = { ensurePythonHvac };
