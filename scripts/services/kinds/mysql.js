/** A private MariaDB (or MySQL) from the machine's binaries (Debian `mariadb-server` when missing). */
'use strict';
const { spawn } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { ROOT, isRoot, log, which, aptInstall, userExists, runAs, makeDataDir, freePort, waitForPort, portOpen, pidAlive, stopPid, tail } = require('../lib');

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

async function start(my) {
  const child = spawn(my.server, mysqlArgs(my), { detached: true, stdio: 'ignore' });
  child.unref();
  my.pid = child.pid; // a new pid on every start, recorded by the caller
  await waitForPort(my.port, { pid: my.pid, name: 'mariadbd', why: () => tail(path.join(my.dataDir, 'error.log')) });
}

async function up() {
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
  const my = { server: found.server, user, dataDir, port: await freePort(), password: crypto.randomBytes(18).toString('hex') };
  await start(my);
  await bootstrap(my);
  my.url = `mysql://root:${my.password}@127.0.0.1:${my.port}/`;
  log(`MariaDB (${found.server}) on 127.0.0.1:${my.port}, data in ${dataDir}`);
  return my;
}

/** Gives root a password and a TCP account (the install leaves root@localhost without one, reachable only on the socket). */
async function bootstrap(my) {
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

async function down(my) {
  await stopPid(my.pid).catch((err) => log(`stopping MariaDB: ${err.message}`));
  fs.rmSync(my.dataDir, { recursive: true, force: true });
}

module.exports = {
  env: 'STRONGROOM_TEST_MYSQL_URL',
  up,
  down,
  running: async (my) => pidAlive(my.pid) && (await portOpen(my.port)),
  stop: (my) => stopPid(my.pid),
  start,
};
