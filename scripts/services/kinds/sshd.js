/**
 * A private OpenSSH server for the SSH engine's tests: the machine's sshd
 * binary (Debian `openssh-server` when missing) run with a config, host key,
 * pid file and log of its own in a temporary directory, on a free loopback
 * port. The machine's own sshd (its config, keys and port 22) is never used.
 *
 * Logins: as root, by certificate only. `AuthorizedKeysFile none` keeps any
 * authorized_keys of the machine out of it, so a plain key never logs in;
 * `TrustedUserCAKeys` names a file the tests append their mount's CA public
 * keys to (sshd reads it at each authentication, so no restart is needed);
 * with no AuthorizedPrincipalsFile sshd admits a certificate only when its
 * principals name the target user. No system user is created.
 */
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { log, which, aptInstall, makeDataDir, freePort, waitForPort, pidAlive, stopPid, tail } = require('../lib');

const SSHD = '/usr/sbin/sshd';

function ensureBinaries() {
  const missing = [];
  if (!fs.existsSync(SSHD)) missing.push('openssh-server');
  if (!which('ssh') || !which('ssh-keygen')) missing.push('openssh-client');
  if (missing.length) aptInstall(missing, 'OpenSSH binaries not found');
  if (!fs.existsSync(SSHD)) throw new Error(`${SSHD} still not found after installing openssh-server`);
  // sshd's privilege separation directory; the package's own service would create it, and it never runs here.
  fs.mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
}

function config(s) {
  return [
    `Port ${s.port}`,
    'ListenAddress 127.0.0.1',
    `HostKey ${s.dir}/ssh_host_ed25519_key`,
    `PidFile ${s.dir}/sshd.pid`,
    `TrustedUserCAKeys ${s.caFile}`,
    'AuthorizedKeysFile none',
    'PermitRootLogin prohibit-password',
    'PubkeyAuthentication yes',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'HostbasedAuthentication no',
    'UsePAM no',
    // The data directory is under TMPDIR; StrictModes would check the login user's home, which is not ours to change.
    'StrictModes no',
    'LogLevel VERBOSE',
    'MaxStartups 100:30:200',
    'PrintMotd no',
    '',
  ].join('\n');
}

function run(s) {
  const r = spawnSync(SSHD, ['-f', s.config, '-E', s.logFile], { encoding: 'utf8', timeout: 30_000 });
  if (r.status !== 0) throw new Error(`sshd failed to start (${r.status ?? r.signal}): ${r.stderr}${tail(s.logFile)}`);
}

function pidOf(s) {
  try {
    return Number(fs.readFileSync(path.join(s.dir, 'sshd.pid'), 'utf8').trim()) || 0;
  } catch {
    return 0;
  }
}

async function start(s) {
  run(s);
  await waitForPort(s.port, { name: 'sshd', timeoutMs: 30_000, why: () => tail(s.logFile) });
  s.pid = pidOf(s);
}

async function up() {
  ensureBinaries();
  const dir = makeDataDir('strongroom-sshd-');
  const s = { dir, port: await freePort(), config: path.join(dir, 'sshd_config'), caFile: path.join(dir, 'trusted_user_ca_keys'), logFile: path.join(dir, 'sshd.log') };
  const keygen = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'strongroom-test-host', '-f', `${dir}/ssh_host_ed25519_key`], { encoding: 'utf8' });
  if (keygen.status !== 0) throw new Error(`ssh-keygen (host key) failed: ${keygen.stderr}`);
  fs.writeFileSync(s.caFile, '', { mode: 0o644 });
  fs.writeFileSync(s.config, config(s), { mode: 0o600 });
  const check = spawnSync(SSHD, ['-t', '-f', s.config], { encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`sshd -t refused the private config: ${check.stderr}`);
  await start(s);
  s.url = `ssh://root@127.0.0.1:${s.port}`;
  s.vars = { STRONGROOM_TEST_SSHD_PORT: String(s.port), STRONGROOM_TEST_SSHD_CA_FILE: s.caFile, STRONGROOM_TEST_SSHD_LOG: s.logFile };
  log(`sshd (${SSHD}) on 127.0.0.1:${s.port}, config in ${dir}`);
  return s;
}

async function stop(s) {
  await stopPid(s.pid || pidOf(s), 10_000);
}

async function down(s) {
  await stop(s);
  fs.rmSync(s.dir, { recursive: true, force: true });
}

module.exports = {
  env: 'STRONGROOM_TEST_SSHD_URL',
  up,
  down,
  running: async (s) => pidAlive(s.pid) && fs.existsSync(s.config),
  stop,
  start,
};
