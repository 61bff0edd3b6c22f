/** A private PostgreSQL from the machine's binaries (Debian `postgresql` when missing). */
'use strict';
const { execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { isRoot, log, which, aptInstall, userExists, runAs, makeDataDir, freePort, portOpen } = require('../lib');

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

async function up() {
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
  const pg = { bin, user, dataDir, port: await freePort(), password };
  pgCtl(pg, 'start');
  pg.url = `postgresql://postgres:${password}@127.0.0.1:${pg.port}/postgres`;
  log(`PostgreSQL (${bin}) on 127.0.0.1:${pg.port}, data in ${dataDir}`);
  return pg;
}

async function down(pg) {
  try {
    pgCtl(pg, 'stop');
  } catch (err) {
    log(`stopping PostgreSQL: ${err.message.split('\n')[0]}`);
  }
  fs.rmSync(pg.dataDir, { recursive: true, force: true });
}

module.exports = {
  env: 'STRONGROOM_TEST_PG_URL',
  up,
  down,
  running: async (pg) => fs.existsSync(path.join(pg.dataDir, 'data', 'postmaster.pid')) && (await portOpen(pg.port)),
  stop: async (pg) => pgCtl(pg, 'stop'),
  start: async (pg) => pgCtl(pg, 'start'),
};
