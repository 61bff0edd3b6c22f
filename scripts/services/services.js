#!/usr/bin/env node
/**
 * Real servers for the tests: one module per kind in kinds/ (postgres, mysql,
 * and whatever else an engine's tests need), each exporting
 *   env                 the variable that names an instance given from outside
 *                       (when it is set, nothing is started for that kind)
 *   up()                starts a PRIVATE instance on free loopback ports, data in a
 *                       temporary directory; returns its state: { port, url, vars?, ... }
 *                       (`url` goes out under `env`, `vars` as further variables)
 *   down(s), running(s) stop for good / is it still up
 *   stop(s), start(s)   stop and start in place (same port and data), optional
 * Binaries come from the machine, or Debian packages installed first (as root;
 * their own services never start). The machine's own services are never touched.
 *
 *   node scripts/services/services.js up [KIND...] [--json] [--for-tests]
 *   node scripts/services/services.js env          print the variables of what runs (shell lines)
 *   node scripts/services/services.js down [--for-tests]
 *   node scripts/services/services.js dedicated KIND   one instance for a single test: prints {"id","url","vars"}
 *   node scripts/services/services.js stop-server|start-server|drop ID   (a dedicated instance)
 *
 * What `up` started is recorded in .test-services/state.json at the checkout's
 * root, so `down` stops exactly that and a second `up` reuses it: a test run
 * starts each service once. Instances started with --for-tests are stopped by
 * the run's teardown (`down --for-tests`) once no other run that uses them is
 * alive (see RUN below); ones started by hand stay up.
 *
 * A test that takes its server away (an outage) gets a DEDICATED instance of
 * its own, never the shared one other test files use concurrently. Dedicated
 * instances are recorded under `dedicated` (the teardown stops any a crashed
 * test left) and need the machine's binaries even when a variable is set.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { readState, writeState, withLock } = require('./lib');

const KINDS = Object.fromEntries(
  fs
    .readdirSync(path.join(__dirname, 'kinds'))
    .filter((f) => f.endsWith('.js'))
    .map((f) => [path.basename(f, '.js'), require(path.join(__dirname, 'kinds', f))]),
);

/**
 * The jest run a test process belongs to (its main process's pid, set by
 * jest-setup.js). Runs that share a checkout share its instances: a run's
 * teardown stops them only when no other run that used them is still alive,
 * and stops only its own dedicated instances (or those of dead runs).
 */
const RUN = process.env.SR_TEST_RUN;
function alive(pid) {
  try {
    process.kill(Number(pid), 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/** The variables an instance answers with: its url under the kind's variable, plus its own. */
const varsOf = (kind, s) => ({ [KINDS[kind].env]: s.url, ...s.vars });

async function up(kinds, forTests) {
  const out = {};
  await withLock(async () => {
    const state = readState();
    if (forTests && RUN) {
      state.runs = [...new Set([...(state.runs ?? []).filter(alive), RUN])];
      writeState(state);
    }
    for (const kind of kinds) {
      const fromEnv = process.env[KINDS[kind].env];
      if (fromEnv) {
        out[KINDS[kind].env] = fromEnv;
        continue;
      }
      const known = state[kind];
      if (known && (await KINDS[kind].running(known))) {
        Object.assign(out, varsOf(kind, known));
        continue;
      }
      if (known) await KINDS[kind].down(known); // stale: its process is gone
      const started = await KINDS[kind].up();
      started.owner = forTests ? 'tests' : 'manual';
      state[kind] = started;
      writeState(state);
      Object.assign(out, varsOf(kind, started));
    }
  });
  return out;
}

async function down(forTests) {
  await withLock(async () => {
    const state = readState();
    const others = (state.runs ?? []).filter((r) => r !== RUN && alive(r));
    if (others.length) state.runs = others;
    else delete state.runs;
    // A dedicated instance belongs to its test run, or, started outside one (a bench section), to
    // the process that asked for it. One with neither on record may belong to a live run: only the
    // last run's teardown stops it.
    const stillOwned = (s) =>
      s.run !== undefined ? s.run !== RUN && alive(s.run) : s.ownerPid !== undefined ? alive(s.ownerPid) : others.length > 0;
    for (const [id, s] of Object.entries(state.dedicated ?? {})) {
      if (forTests && stillOwned(s)) continue;
      await KINDS[s.kind].down(s);
      process.stderr.write(`[services] stopped dedicated ${s.kind} on port ${s.port}\n`);
      delete state.dedicated[id];
    }
    if (state.dedicated && Object.keys(state.dedicated).length === 0) delete state.dedicated;
    // The shared instances stay while another test run uses them.
    if (!forTests || others.length === 0) {
      for (const kind of Object.keys(KINDS)) {
        const s = state[kind];
        if (!s || (forTests && s.owner !== 'tests')) continue;
        await KINDS[kind].down(s);
        process.stderr.write(`[services] stopped ${kind} on port ${s.port}\n`);
        delete state[kind];
      }
    }
    writeState(state);
  });
}

/** Starts an instance for one test alone; it is never handed to `up`. */
async function upDedicated(kind) {
  const started = await KINDS[kind].up(); // outside the lock: other workers' `up` need not wait for it
  // Outside a test run (a bench section), the process that asked owns it: no test run's teardown stops it while that lives.
  Object.assign(started, { kind, owner: 'tests', id: `${kind}-${started.port}`, ...(RUN ? { run: RUN } : { ownerPid: process.ppid }) });
  await withLock(async () => {
    const state = readState();
    state.dedicated = { ...state.dedicated, [started.id]: started };
    writeState(state);
  });
  return { id: started.id, url: started.url, vars: started.vars ?? {} };
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
    writeState(state);
  });
}

async function main() {
  const [cmd, ...rest] = process.argv.slice(2);
  const flags = new Set(rest.filter((a) => a.startsWith('--')));
  const names = rest.filter((a) => !a.startsWith('--'));
  const known = Object.keys(KINDS).join(', ');
  if (!['stop-server', 'start-server', 'drop'].includes(cmd)) {
    for (const n of names) if (!KINDS[n]) throw new Error(`unknown service ${n} (${known})`);
  }
  switch (cmd) {
    case 'up': {
      const vars = await up(names.length ? names : Object.keys(KINDS), flags.has('--for-tests'));
      if (flags.has('--json')) process.stdout.write(JSON.stringify(vars) + '\n');
      else for (const [k, v] of Object.entries(vars)) process.stdout.write(`${k}=${v}\n`);
      return;
    }
    case 'env': {
      const state = readState();
      for (const kind of Object.keys(KINDS)) {
        const given = process.env[KINDS[kind].env];
        const vars = given ? { [KINDS[kind].env]: given } : state[kind] ? varsOf(kind, state[kind]) : {};
        for (const [k, v] of Object.entries(vars)) process.stdout.write(`${k}=${v}\n`);
      }
      return;
    }
    case 'down':
      return down(flags.has('--for-tests'));
    case 'dedicated':
      if (names.length !== 1) throw new Error(`dedicated takes one of: ${known}`);
      process.stdout.write(JSON.stringify(await upDedicated(names[0])) + '\n');
      return;
    case 'stop-server':
    case 'start-server':
      if (names.length !== 1) throw new Error(`${cmd} takes the id of a dedicated instance`);
      return updateDedicated(names[0], async (s) => {
        const k = KINDS[s.kind];
        if (!k.stop || !k.start) throw new Error(`${s.kind} cannot be stopped in place`);
        await (cmd === 'start-server' ? k.start(s) : k.stop(s));
        return true;
      });
    case 'drop':
      if (names.length !== 1) throw new Error('drop takes the id of a dedicated instance');
      return updateDedicated(names[0], async (s) => {
        await KINDS[s.kind].down(s);
        return false;
      });
    default:
      process.stderr.write(`usage: node scripts/services/services.js up|down|env [KIND...] [--json] [--for-tests] | dedicated KIND | stop-server|start-server|drop ID   (KIND: ${known})\n`);
      process.exitCode = 2;
  }
}

main().catch((err) => {
  process.stderr.write(`[services] ${err.message}\n`);
  process.exit(1);
});
