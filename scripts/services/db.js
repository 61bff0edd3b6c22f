#!/usr/bin/env node
/**
 * Real PostgreSQL and MySQL/MariaDB servers for the tests.
 *
 *   node scripts/services/db.js up [postgres] [mysql] [--json] [--for-tests]
 *   node scripts/services/db.js env          print the URLs of what runs (shell lines)
 *   node scripts/services/db.js down [--for-tests]
 *   node scripts/services/db.js dedicated postgres|mysql   start one for a single test: prints {"id","url"}
 *   node scripts/services/db.js stop-server|start-server|drop ID   (a dedicated instance)
 *
 * STRONGROOM_TEST_PG_URL / STRONGROOM_TEST_MYSQL_URL, when set, are used as
 * they are and nothing is started (they must be superuser URLs, and the
 * server must check passwords: the tests log in with wrong ones on purpose).
 * Otherwise `up` starts PRIVATE instances from the machine's binaries on free
 * loopback ports, data in a temporary directory, and installs the Debian
 * packages first when the binaries are missing (as root; the packaged
 * services are not started). The machine's own services (5432, 3306) are
 * never touched. What `up` started is recorded in .test-services/state.json
 * at the repository root, so `down` stops exactly that and a second `up`
 * reuses it. Instances started with --for-tests are stopped by the test
 * run's teardown (`down --for-tests`); ones started by hand stay up.
 *
 * A test that takes its server away (stops it to see what an outage does)
 * gets a DEDICATED instance of its own, never the shared one: other test
 * files use that concurrently. Dedicated instances are recorded under
 * `dedicated` in the state (the teardown stops any a crashed test left) and
 * need the machine's binaries even when a URL variable is set.
 */
'use strict';
const { spawn, spawnSync, execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '../..');
const STATE_DIR = path.join(ROOT, '.test-services');
const STATE_FILE = path.join(STATE_DIR, 'state.json');
const LOCK_DIR = path.join(STATE_DIR, 'lock');
const ENV = { postgres: 'STRONGROOM_TEST_PG_URL', mysql: 'STRONGROOM_TEST_MYSQL_URL' };
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

const log = (msg) => process.stderr.write(`[db] ${msg}\n`);

// ------------------------------------------------------------------ state and lock

function readState() {
  try {
    return JSON.parse(fs.readFileSync(STATE_FILE, 'utf8'));
  } catch {
    return {};
  }
}

function writeState(state) {
  fs.mkdirSync(STATE_DIR, { recursive: true, mode: 0o700 });
  // Holds the private instances' superuser passwords: owner-only.
  fs.writeFileSync(STATE_FILE, JSON.stringify(state, null, 2), { mode: 0o600 });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** One `up`/`down` at a time per checkout (jest workers call `up` concurrently). */
async function withLock(fn) {
  fs.mkdirSync(STATE_DIR, { recursive: true, mode: 0o700 });
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      fs.mkdirSync(LOCK_DIR);
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      const age = Date.now() - (fs.statSync(LOCK_DIR, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 240_000) fs.rmSync(LOCK_DIR, { recursive: true, force: true }); // a crashed holder
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

// ------------------------------------------------------------------ helpers

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

function pidAlive(pid) {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
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
  const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

/** Debian packages when binaries are missing; the packaged services must not start (policy-rc.d). */
function aptInstall(packages, why) {
  if (!isRoot || !which('apt-get')) {
    throw new Error(`${why}: install ${packages.join(' ')} (Debian) or set the URL variable, see README "Tests and their databases"`);
  }
  log(`${why}: installing Debian packages ${packages.join(' ')} (their own services are not started)`);
  const policy = '/usr/sbin/policy-rc.d';
  const created = !fs.existsSync(policy);
  if (created) fs.writeFileSync(policy, '#!/bin/sh\nexit 101\n', { mode: 0o755 });
  try {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const opts = { stdio: ['ignore', 'inherit', 'inherit'], env, timeout: 900_000 };
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

// ------------------------------------------------------------------ PostgreSQL

function findPgBin() {
  const base = '/usr/lib/postgresql';
  if (fs.existsSync(base)) {
    const versions = fs
      .readdirSync(base)
      .filter((v) => fs.existsSync(path.join(base, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return path.join(base, versions[0], 'bin');
  }
  const initdb = which('initdb');
  return initdb && which('pg_ctl') ? path.dirname(initdb) : null;
}

function pgUser() {
  if (!isRoot) return null;
  return userExists('postgres') ? 'postgres' : 'nobody'; // PostgreSQL refuses to run as root
}

function pgCtl(pg, action) {
  const args = ['-D', pg.dataDir + '/data', '-w', '-t', '60'];
  if (action === 'start') {
    args.push('-l', pg.dataDir + '/postgres.log', '-o', `-p ${pg.port} -k ${pg.dataDir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`, 'start');
  } else {
    args.push('-m', 'fast', 'stop');
  }
  // pg_ctl leaves the server running detached with its output in the log file.
  runAs(pg.user, path.join(pg.bin, 'pg_ctl'), args, { stdio: ['ignore', 'pipe', 'pipe'] });
}

async function upPostgres() {
  let bin = findPgBin();
  if (!bin) {
    aptInstall(['postgresql'], 'PostgreSQL binaries not found');
    bin = findPgBin();
    if (!bin) throw new Error('PostgreSQL binaries still not found after installing');
  }
  const user = pgUser();
  const dataDir = makeDataDir('strongroom-pg-', user);
  const password = crypto.randomBytes(18).toString('hex');
  const pwfile = path.join(dataDir, 'pwfile');
  fs.writeFileSync(pwfile, password + '\n', { mode: 0o600 });
  if (user) execFileSync('chown', [user, pwfile]);
  runAs(user, path.join(bin, 'initdb'), ['-D', dataDir + '/data', '-U', 'postgres', '--pwfile', pwfile, '--auth-local=trust', '--auth-host=scram-sha-256', '-E', 'UTF8', '--no-sync']);
  fs.rmSync(pwfile, { force: true });
  const pg = { kind: 'postgres', bin, user, dataDir, port: await freePort(), password };
  pgCtl(pg, 'start');
  pg.url = `postgresql://postgres:${password}@127.0.0.1:${pg.port}/postgres`;
  log(`PostgreSQL (${bin}) on 127.0.0.1:${pg.port}, data in ${dataDir}`);
  return pg;
}

function downPostgres(pg) {
  try {
    pgCtl(pg, 'stop');
  } catch (err) {
    log(`stopping PostgreSQL: ${err.message.split('\n')[0]}`);
  }
  fs.rmSync(pg.dataDir, { recursive: true, force: true });
}

async function postgresRunning(pg) {
  return fs.existsSync(path.join(pg.dataDir, 'data', 'postmaster.pid')) && (await portOpen(pg.port));
}

// ------------------------------------------------------------------ MySQL / MariaDB

function findMariadb() {
  const server = ['/usr/sbin/mariadbd', '/usr/sbin/mysqld'].find((p) => fs.existsSync(p)) ?? which('mariadbd');
  const install = which('mariadb-install-db') ?? which('mysql_install_db');
  return server && install ? { server, install } : null;
}

function mysqlArgs(my) {
  const args = [
    '--no-defaults',
    `--datadir=${my.dataDir}/data`,
    `--socket=${my.dataDir}/mysqld.sock`,
    `--pid-file=${my.dataDir}/mysqld.pid`,
    `--log-error=${my.dataDir}/error.log`,
    `--port=${my.port}`,
    '--bind-address=127.0.0.1',
    '--skip-name-resolve',
    '--innodb-buffer-pool-size=32M',
    '--max-connections=200',
  ];
  if (my.user) args.push(`--user=${my.user}`);
  return args;
}

async function startMysqlServer(my) {
  const child = spawn(my.server, mysqlArgs(my), { detached: true, stdio: 'ignore' });
  child.unref();
  my.pid = child.pid;
  const deadline = Date.now() + 60_000;
  while (!(await portOpen(my.port))) {
    if (!pidAlive(my.pid)) throw new Error(`mariadbd exited at start: ${tail(path.join(my.dataDir, 'error.log'))}`);
    if (Date.now() > deadline) throw new Error(`mariadbd did not listen in 60 s: ${tail(path.join(my.dataDir, 'error.log'))}`);
    await sleep(100);
  }
}

async function stopMysqlServer(my) {
  if (!pidAlive(my.pid)) return;
  process.kill(my.pid, 'SIGTERM');
  const deadline = Date.now() + 30_000;
  while (pidAlive(my.pid) && Date.now() < deadline) await sleep(100);
  if (pidAlive(my.pid)) process.kill(my.pid, 'SIGKILL');
}

function tail(file) {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-15).join('\n');
  } catch {
    return '(no log)';
  }
}

async function upMysql() {
  let found = findMariadb();
  if (!found) {
    aptInstall(['mariadb-server'], 'MariaDB binaries not found');
    found = findMariadb();
    if (!found) throw new Error('MariaDB binaries still not found after installing');
  }
  const user = isRoot ? (userExists('mysql') ? 'mysql' : 'root') : null;
  const dataDir = makeDataDir('strongroom-mysql-', user && user !== 'root' ? user : null);
  const installArgs = ['--no-defaults', `--datadir=${dataDir}/data`, '--auth-root-authentication-method=normal', '--skip-test-db'];
  if (user) installArgs.push(`--user=${user}`);
  runAs(null, found.install, installArgs, { stdio: ['ignore', 'pipe', 'pipe'] });
  const my = { kind: 'mysql', server: found.server, user, dataDir, port: await freePort(), password: crypto.randomBytes(18).toString('hex') };
  await startMysqlServer(my);
  await bootstrapMysql(my);
  my.url = `mysql://root:${my.password}@127.0.0.1:${my.port}/`;
  log(`MariaDB (${found.server}) on 127.0.0.1:${my.port}, data in ${dataDir}`);
  return my;
}

/** Gives root a password and a TCP account (the install leaves root@localhost without one, reachable only on the socket). */
async function bootstrapMysql(my) {
  const mysql = require(require.resolve('mysql2/promise', { paths: [ROOT, path.join(ROOT, 'plugins/database-mysql')] }));
  const conn = await mysql.createConnection({ socketPath: `${my.dataDir}/mysqld.sock`, user: 'root', multipleStatements: true });
  try {
    const pw = conn.escape(my.password);
    await conn.query(
      `DELETE FROM mysql.global_priv WHERE User = ''; FLUSH PRIVILEGES;` +
        `CREATE USER IF NOT EXISTS 'root'@'127.0.0.1'; GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;` +
        `ALTER USER 'root'@'127.0.0.1' IDENTIFIED BY ${pw}; ALTER USER 'root'@'localhost' IDENTIFIED BY ${pw}; FLUSH PRIVILEGES;`,
    );
  } finally {
    await conn.end();
  }
}

async function downMysql(my) {
  await stopMysqlServer(my).catch((err) => log(`stopping MariaDB: ${err.message}`));
  fs.rmSync(my.dataDir, { recursive: true, force: true });
}

async function mysqlRunning(my) {
  return pidAlive(my.pid) && (await portOpen(my.port));
}

// ------------------------------------------------------------------ commands

const KINDS = {
  postgres: { up: upPostgres, down: downPostgres, running: postgresRunning },
  mysql: { up: upMysql, down: downMysql, running: mysqlRunning },
};

async function up(kinds, forTests) {
  const urls = {};
  await withLock(async () => {
    const state = readState();
    for (const kind of kinds) {
      const fromEnv = process.env[ENV[kind]];
      if (fromEnv) {
        urls[ENV[kind]] = fromEnv;
        continue;
      }
      const known = state[kind];
      if (known && (await KINDS[kind].running(known))) {
        urls[ENV[kind]] = known.url;
        continue;
      }
      if (known) await KINDS[kind].down(known); // stale: its process is gone
      const started = await KINDS[kind].up();
      started.owner = forTests ? 'tests' : 'manual';
      state[kind] = started;
      writeState(state);
      urls[ENV[kind]] = started.url;
    }
  });
  return urls;
}

async function down(forTests) {
  await withLock(async () => {
    const state = readState();
    for (const kind of Object.keys(KINDS)) {
      const s = state[kind];
      if (!s || (forTests && s.owner !== 'tests')) continue;
      await KINDS[kind].down(s);
      log(`stopped ${kind} on port ${s.port}`);
      delete state[kind];
    }
    // Left by a test that did not get to drop its own.
    for (const s of Object.values(state.dedicated ?? {})) {
      await KINDS[s.kind].down(s);
      log(`stopped dedicated ${s.kind} on port ${s.port}`);
    }
    delete state.dedicated;
    if (Object.keys(state).length === 0) fs.rmSync(STATE_FILE, { force: true });
    else writeState(state);
  });
}

/** Starts an instance for one test alone; it is never handed to `up`. */
async function upDedicated(kind) {
  const started = await KINDS[kind].up(); // outside the lock: other workers' `up` need not wait for an initdb
  started.owner = 'tests';
  started.id = `${kind}-${started.port}`;
  await withLock(async () => {
    const state = readState();
    state.dedicated = { ...state.dedicated, [started.id]: started };
    writeState(state);
  });
  return { id: started.id, url: started.url };
}

async function updateDedicated(id, fn) {
  return withLock(async () => {
    const state = readState();
    const s = state.dedicated?.[id];
    if (!s) throw new Error(`no dedicated instance ${id}`);
    const keep = await fn(s);
    if (keep) state.dedicated[id] = s;
    else delete state.dedicated[id];
    if (Object.keys(state.dedicated).length === 0) delete state.dedicated;
    if (Object.keys(state).length === 0) fs.rmSync(STATE_FILE, { force: true });
    else writeState(state);
  });
}

/** Stops or starts a dedicated server in place (same port and data), for tests of a database that goes away. */
async function toggle(id, action) {
  await updateDedicated(id, async (s) => {
    if (s.kind === 'postgres') pgCtl(s, action === 'start-server' ? 'start' : 'stop');
    else if (action === 'start-server') await startMysqlServer(s); // a new pid, recorded
    else await stopMysqlServer(s);
    return true;
  });
}

async function dropDedicated(id) {
  await updateDedicated(id, async (s) => {
    await KINDS[s.kind].down(s);
    return false;
  });
}

async function main() {
  const [cmd, ...rest] = process.argv.slice(2);
  const flags = new Set(rest.filter((a) => a.startsWith('--')));
  const names = rest.filter((a) => !a.startsWith('--'));
  const takesId = ['stop-server', 'start-server', 'drop'].includes(cmd);
  if (!takesId) {
    for (const n of names) if (!KINDS[n]) throw new Error(`unknown service ${n} (postgres, mysql)`);
  }
  switch (cmd) {
    case 'up': {
      const urls = await up(names.length ? names : Object.keys(KINDS), flags.has('--for-tests'));
      if (flags.has('--json')) process.stdout.write(JSON.stringify(urls) + '\n');
      else for (const [k, v] of Object.entries(urls)) process.stdout.write(`${k}=${v}\n`);
      return;
    }
    case 'env': {
      const state = readState();
      for (const kind of Object.keys(KINDS)) {
        const url = process.env[ENV[kind]] ?? state[kind]?.url;
        if (url) process.stdout.write(`${ENV[kind]}=${url}\n`);
      }
      return;
    }
    case 'down':
      return down(flags.has('--for-tests'));
    case 'dedicated':
      if (names.length !== 1) throw new Error('dedicated takes one of: postgres, mysql');
      process.stdout.write(JSON.stringify(await upDedicated(names[0])) + '\n');
      return;
    case 'stop-server':
    case 'start-server':
    case 'drop':
      if (names.length !== 1) throw new Error(`${cmd} takes the id of a dedicated instance`);
      return cmd === 'drop' ? dropDedicated(names[0]) : toggle(names[0], cmd);
    default:
      process.stderr.write('usage: node scripts/services/db.js up|down|env [postgres] [mysql] [--json] [--for-tests] | dedicated postgres|mysql | stop-server|start-server|drop ID\n');
      process.exitCode = 2;
  }
}

main().catch((err) => {
  process.stderr.write(`[db] ${err.message}\n`);
  process.exit(1);
});
