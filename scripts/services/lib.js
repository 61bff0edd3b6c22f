/**
 * What every service kind (kinds/*.js) shares: the checkout's state file and
 * lock, ports, processes, and installing Debian packages without starting
 * their own services. See services.js for the commands.
 */
'use strict';
const { spawnSync, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '../..');
const STATE_DIR = path.join(ROOT, '.test-services');
const STATE_FILE = path.join(STATE_DIR, 'state.json');
const LOCK_DIR = path.join(STATE_DIR, 'lock');
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

const log = (msg) => process.stderr.write(`[services] ${msg}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function readState() {
  try {
    return JSON.parse(fs.readFileSync(STATE_FILE, 'utf8'));
  } catch {
    return {};
  }
}

function writeState(state) {
  fs.mkdirSync(STATE_DIR, { recursive: true, mode: 0o700 });
  if (Object.keys(state).length === 0) return fs.rmSync(STATE_FILE, { force: true });
  // Holds the private instances' admin passwords: owner-only.
  fs.writeFileSync(STATE_FILE, JSON.stringify(state, null, 2), { mode: 0o600 });
}

/** One `up`/`down` at a time per checkout (jest workers call `up` concurrently). */
async function withLock(fn) {
  fs.mkdirSync(STATE_DIR, { recursive: true, mode: 0o700 });
  const deadline = Date.now() + 600_000;
  for (;;) {
    try {
      fs.mkdirSync(LOCK_DIR);
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      const age = Date.now() - (fs.statSync(LOCK_DIR, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 540_000) fs.rmSync(LOCK_DIR, { recursive: true, force: true }); // a crashed holder
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${LOCK_DIR}`);
      await sleep(200);
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(LOCK_DIR, { recursive: true, force: true });
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

function portOpen(port) {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
    sock.setTimeout(2000, () => {
      sock.destroy();
      resolve(false);
    });
  });
}

/** Waits until `port` accepts connections; fails early when `pid` (if given) has exited, with `why()` appended. */
async function waitForPort(port, { pid, timeoutMs = 60_000, name = 'server', why = () => '' } = {}) {
  const deadline = Date.now() + timeoutMs;
  while (!(await portOpen(port))) {
    if (pid && !pidAlive(pid)) throw new Error(`${name} exited at start: ${why()}`);
    if (Date.now() > deadline) throw new Error(`${name} did not listen on ${port} in ${timeoutMs / 1000} s: ${why()}`);
    await sleep(100);
  }
}

function pidAlive(pid) {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/** SIGTERM, then SIGKILL after `graceMs`. */
async function stopPid(pid, graceMs = 30_000) {
  if (!pidAlive(pid)) return;
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (pidAlive(pid) && Date.now() < deadline) await sleep(100);
  if (pidAlive(pid)) process.kill(pid, 'SIGKILL');
}

function userExists(name) {
  return spawnSync('id', ['-u', name], { stdio: 'ignore' }).status === 0;
}

/** Runs a command as `user` (root only: runuser), or as ourselves. Throws with its output on failure. */
function runAs(user, cmd, args, opts = {}) {
  const [c, a] = user ? ['runuser', ['-u', user, '--', cmd, ...args]] : [cmd, args];
  const r = spawnSync(c, a, { encoding: 'utf8', timeout: 120_000, ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal}): ${(r.stderr || '') + (r.stdout || '')}`.slice(0, 4000));
  return r.stdout;
}

function which(name) {
  const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8', env: { ...process.env, PATH: `${process.env.PATH}:/usr/sbin:/sbin` } });
  return r.status === 0 ? r.stdout.trim() : null;
}

/** Debian packages when binaries are missing; the packaged services must not start (policy-rc.d). */
function aptInstall(packages, why) {
  if (!isRoot || !which('apt-get')) {
    throw new Error(`${why}: install ${packages.join(' ')} (Debian) or set the URL variable, see README "Tests and their services"`);
  }
  log(`${why}: installing Debian packages ${packages.join(' ')} (their own services are not started)`);
  const policy = '/usr/sbin/policy-rc.d';
  const created = !fs.existsSync(policy);
  if (created) fs.writeFileSync(policy, '#!/bin/sh\nexit 101\n', { mode: 0o755 });
  try {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    // apt's progress goes to stderr: our stdout may be a JSON answer a caller parses.
    const opts = { stdio: ['ignore', 2, 2], env, timeout: 900_000 };
    let r = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', ...packages], opts);
    if (r.status !== 0) {
      spawnSync('apt-get', ['update'], opts);
      r = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', ...packages], opts);
    }
    if (r.status !== 0) throw new Error(`apt-get install ${packages.join(' ')} failed`);
  } finally {
    if (created) fs.rmSync(policy, { force: true });
  }
}

function makeDataDir(prefix, owner) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  if (owner) execFileSync('chown', [owner, dir]);
  return dir;
}

function tail(file, lines = 15) {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

module.exports = {
  ROOT,
  STATE_FILE,
  isRoot,
  log,
  sleep,
  readState,
  writeState,
  withLock,
  freePort,
  portOpen,
  waitForPort,
  pidAlive,
  stopPid,
  userExists,
  runAs,
  which,
  aptInstall,
  makeDataDir,
  tail,
};
