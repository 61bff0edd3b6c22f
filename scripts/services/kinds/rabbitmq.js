/**
 * A private RabbitMQ with the management plugin, from the machine's
 * `rabbitmq-server` (Debian package when missing).
 *
 * Everything it uses is its own: node name `strongroom-<port>@localhost`,
 * AMQP, management and Erlang distribution ports on free loopback ports, and
 * a directory holding its database (mnesia), logs, config file, enabled-plugins
 * file, environment file and HOME (so its Erlang cookie is its own too). The
 * machine's own RabbitMQ (5672, node rabbit@<host>, /etc/rabbitmq) is never
 * read nor touched: rabbitmqctl is only ever run with `-n <our node>` and our
 * HOME. epmd, the Erlang port mapper, is shared by every node on the machine
 * and is left running.
 *
 * The administrator (`admin`, random password) is created by the broker at
 * its first boot from the config file (`default_user`), which saves a
 * rabbitmqctl call (an Erlang VM start of its own) at start-up.
 *
 *   STRONGROOM_TEST_RABBITMQ_URL        the management API, with the admin's credentials:
 *                                       http://admin:PW@127.0.0.1:PORT
 *   STRONGROOM_TEST_RABBITMQ_AMQP_URL   the AMQP listener, without credentials: amqp://127.0.0.1:PORT
 *                                       (for a broker given from outside, tests ask the management API)
 */
'use strict';
const { spawn, spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { log, sleep, which, aptInstall, makeDataDir, freePort, portOpen, pidAlive, tail } = require('../lib');

const START_TIMEOUT_MS = 240_000; // a cold Erlang boot on a loaded 2-core machine takes 20-40 s

/** The scripts themselves: Debian's /usr/sbin ones are a wrapper that switches to the `rabbitmq` user and its HOME. */
function findRabbit() {
  const debian = '/usr/lib/rabbitmq/bin';
  if (fs.existsSync(path.join(debian, 'rabbitmq-server')) && fs.existsSync(path.join(debian, 'rabbitmqctl'))) {
    return { server: path.join(debian, 'rabbitmq-server'), ctl: path.join(debian, 'rabbitmqctl') };
  }
  const server = which('rabbitmq-server');
  const ctl = which('rabbitmqctl');
  if (!server || !ctl) return null;
  if (fs.readFileSync(server, 'utf8').includes('rabbitmq-script-wrapper')) return null;
  return { server, ctl };
}

/** The environment of our node, for the server and for rabbitmqctl alike. */
function rabbitEnv(r) {
  const dir = r.dataDir;
  return {
    PATH: process.env.PATH,
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    HOME: dir, // the Erlang cookie is $HOME/.erlang.cookie
    RABBITMQ_NODENAME: r.node,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(r.port),
    RABBITMQ_DIST_PORT: String(r.distPort),
    RABBITMQ_MNESIA_BASE: path.join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: path.join(dir, 'log'),
    RABBITMQ_PID_FILE: path.join(dir, 'rabbitmq.pid'),
    RABBITMQ_CONFIG_FILE: path.join(dir, 'rabbitmq.conf'),
    RABBITMQ_ADVANCED_CONFIG_FILE: path.join(dir, 'advanced.config'),
    RABBITMQ_ENABLED_PLUGINS_FILE: path.join(dir, 'enabled_plugins'),
    // Not /etc/rabbitmq/rabbitmq-env.conf: it names the machine's node.
    RABBITMQ_CONF_ENV_FILE: path.join(dir, 'rabbitmq-env.conf'),
    // Erlang distribution on loopback only, and our CLI's own distribution ports beside ours.
    ERL_EPMD_ADDRESS: '127.0.0.1',
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: '-kernel inet_dist_use_interface {127,0,0,1}',
    RABBITMQ_CTL_ERL_ARGS: '-kernel inet_dist_use_interface {127,0,0,1}',
    RABBITMQ_CTL_DIST_PORT_MIN: String(r.ctlPort),
    RABBITMQ_CTL_DIST_PORT_MAX: String(r.ctlPort),
  };
}

function writeFiles(r) {
  const dir = r.dataDir;
  fs.writeFileSync(
    path.join(dir, 'rabbitmq.conf'),
    [
      `listeners.tcp.1 = 127.0.0.1:${r.port}`,
      `management.tcp.ip = 127.0.0.1`,
      `management.tcp.port = ${r.mgmtPort}`,
      // The administrator, created at first boot (an empty database) only.
      `default_user = admin`,
      `default_pass = ${r.password}`,
      `default_user_tags.administrator = true`,
      `default_permissions.configure = .*`,
      `default_permissions.read = .*`,
      `default_permissions.write = .*`,
      // Users the tests create log in over 127.0.0.1.
      `loopback_users = none`,
      // A full temporary disk must not block publishers in the middle of a test.
      `disk_free_limit.absolute = 20MB`,
      // No message-rate statistics and a slow stats tick: an idle broker costs the shared 2 cores next to nothing.
      `management.rates_mode = none`,
      `collect_statistics_interval = 60000`,
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  fs.writeFileSync(path.join(dir, 'advanced.config'), '[].\n');
  fs.writeFileSync(path.join(dir, 'enabled_plugins'), '[rabbitmq_management].\n');
  fs.writeFileSync(path.join(dir, 'rabbitmq-env.conf'), '');
  const cookie = path.join(dir, '.erlang.cookie');
  if (!fs.existsSync(cookie)) fs.writeFileSync(cookie, crypto.randomBytes(20).toString('hex').toUpperCase(), { mode: 0o400 });
}

/** The broker's own pid (beam.smp), written by the broker once it runs. */
function beamPid(r) {
  try {
    return Number(fs.readFileSync(path.join(r.dataDir, 'rabbitmq.pid'), 'utf8').trim()) || null;
  } catch {
    return null;
  }
}

async function apiReady(r) {
  try {
    const res = await fetch(`http://127.0.0.1:${r.mgmtPort}/api/overview`, {
      headers: { authorization: `Basic ${Buffer.from(`admin:${r.password}`).toString('base64')}` },
      signal: AbortSignal.timeout(5000),
    });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

async function start(r) {
  writeFiles(r);
  fs.rmSync(path.join(r.dataDir, 'rabbitmq.pid'), { force: true });
  const out = fs.openSync(path.join(r.dataDir, 'server.out'), 'a');
  const child = spawn(r.server, [], { detached: true, stdio: ['ignore', out, out], env: rabbitEnv(r), cwd: r.dataDir });
  fs.closeSync(out);
  child.unref();
  r.pid = child.pid; // the start script, which forwards SIGTERM to the broker; a new pid on every start
  // Ready when the management API answers the admin and AMQP listens (the API can answer an instant before a boot fails).
  const deadline = Date.now() + START_TIMEOUT_MS;
  const why = () => tail(path.join(r.dataDir, 'server.out'), 25);
  for (;;) {
    if (!pidAlive(r.pid)) throw new Error(`RabbitMQ exited at start: ${why()}`);
    if ((await apiReady(r)) && (await portOpen(r.port))) break;
    if (Date.now() > deadline) throw new Error(`RabbitMQ not ready on ${r.mgmtPort}/${r.port} in ${START_TIMEOUT_MS / 1000} s: ${why()}`);
    await sleep(250);
  }
  r.beamPid = beamPid(r);
}

async function stop(r) {
  if (!pidAlive(r.pid) && !pidAlive(r.beamPid)) return;
  const ctl = spawnSync(r.ctl, ['-n', r.node, 'stop'], { env: rabbitEnv(r), encoding: 'utf8', timeout: 120_000 });
  if (ctl.status !== 0) log(`rabbitmqctl -n ${r.node} stop: ${(ctl.stderr || ctl.stdout || String(ctl.signal)).trim().split('\n')[0]}`);
  // Then make sure: the broker and its start script are gone (SIGTERM is a clean stop too, SIGKILL the last resort).
  for (const pid of [r.beamPid, r.pid]) {
    if (!pid) continue;
    const deadline = Date.now() + 30_000;
    while (pidAlive(pid) && Date.now() < deadline) await sleep(100);
    if (pidAlive(pid)) {
      log(`RabbitMQ ${r.node}: pid ${pid} still running, SIGTERM`);
      process.kill(pid, 'SIGTERM');
      const hard = Date.now() + 30_000;
      while (pidAlive(pid) && Date.now() < hard) await sleep(100);
      if (pidAlive(pid)) process.kill(pid, 'SIGKILL');
    }
  }
}

async function up() {
  let found = findRabbit();
  if (!found) {
    aptInstall(['rabbitmq-server'], 'RabbitMQ not found');
    found = findRabbit();
    if (!found) throw new Error('RabbitMQ still not found after installing rabbitmq-server');
  }
  const dataDir = makeDataDir('strongroom-rabbitmq-', null);
  const ports = new Set();
  while (ports.size < 4) ports.add(await freePort());
  const [port, mgmtPort, distPort, ctlPort] = [...ports];
  const r = {
    ...found,
    dataDir,
    port,
    mgmtPort,
    distPort,
    ctlPort,
    node: `strongroom-${port}@localhost`,
    password: crypto.randomBytes(18).toString('hex'),
  };
  try {
    await start(r);
  } catch (err) {
    await stop(r).catch(() => {});
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  r.url = `http://admin:${r.password}@127.0.0.1:${r.mgmtPort}`;
  r.vars = { STRONGROOM_TEST_RABBITMQ_AMQP_URL: `amqp://127.0.0.1:${r.port}` };
  log(`RabbitMQ node ${r.node}: AMQP 127.0.0.1:${r.port}, management 127.0.0.1:${r.mgmtPort}, data in ${dataDir}`);
  return r;
}

async function down(r) {
  await stop(r).catch((err) => log(`stopping RabbitMQ: ${err.message}`));
  fs.rmSync(r.dataDir, { recursive: true, force: true });
}

module.exports = {
  env: 'STRONGROOM_TEST_RABBITMQ_URL',
  up,
  down,
  running: async (r) => pidAlive(r.pid) && (await portOpen(r.mgmtPort)),
  stop,
  start,
};
