'use strict';
/*
 * The core's CPU per lease-issuing request (a measurement tool, not a test). A production-config
 * server (level storage, init + unseal) with the test lease plugin (test/fixtures/lease-plugin)
 * registered from a plugin directory answers GET lt/creds/r (a lease per request) and, as the
 * reference, GET kv/data/x (a kv v2 read) at concurrency 8, from a load process of its own
 * (load.js); each phase runs twice (the first one warms the JIT), and prints req/s and the core
 * process's CPU per request, split into its main thread (the event loop) and its other threads
 * (the libuv pool: LevelDB writes and fsyncs; V8: GC, compilation); and the core's CPU per second
 * while idle, which a slow phase pays more of per request.
 *
 *   node scripts/bench/lease-cpu.js [--server-root DIR] [--secs 4] [--only creds|kv] [--cpu-prof DIR]
 * Runs a built checkout (`npm run build`; default this one). With --cpu-prof the core writes a
 * .cpuprofile into DIR when it exits.
 */
const { execFileSync, spawn } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const argv = process.argv.slice(2);
const arg = (name) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const ROOT = path.resolve(arg('--server-root') ?? path.join(__dirname, '..', '..'));
const SECS = Number(arg('--secs') ?? 4);
const ONLY = arg('--only');
const PROFILE_DIR = arg('--cpu-prof');
const CONCURRENCY = 8;
const LOAD = path.join(__dirname, 'load.js');
const { bundlePlugin } = require('../bundle-plugin.js');
const { freePort } = require('../services/lib.js');
const { threadCpuUs } = require('./proc.js');

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strongroom-lease-cpu-'));
  const plugins = path.join(dir, 'plugins');
  fs.mkdirSync(path.join(plugins, 'lease-test'), { recursive: true });
  const entry = path.join(plugins, 'lease-test', 'main.js');
  bundlePlugin(path.join(ROOT, 'test/fixtures/lease-plugin/dist/main.js'), entry);
  const sha256 = crypto.createHash('sha256').update(fs.readFileSync(entry)).digest('hex');
  const port = await freePort();
  const config = path.join(dir, 'config.hcl');
  fs.writeFileSync(config, `storage "level" { path = "${dir}/data" }\nlistener "tcp" {\n  address = "127.0.0.1:${port}"\n  tls_disable = true\n}\nplugin_directory = "${plugins}"\n`);
  const nodeArgs = PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(PROFILE_DIR)}`] : [];
  const core = spawn(process.execPath, [...nodeArgs, path.join(ROOT, 'core/dist/cli/main.js'), 'server', `-config=${config}`, '-log-level=warn'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, TMPDIR: dir },
  });
  const base = `http://127.0.0.1:${port}/v1/`;
  const api = async (method, p, body, token) => {
    const r = await fetch(base + p, { method, headers: { 'content-type': 'application/json', ...(token ? { 'X-Vault-Token': token } : {}) }, body: body ? JSON.stringify(body) : undefined });
    const text = await r.text();
    if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : null;
  };
  try {
    for (let i = 0; ; i++) {
      try {
        await fetch(`${base}sys/health`);
        break;
      } catch (err) {
        if (i > 300) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const init = await api('POST', 'sys/init', { secret_shares: 1, secret_threshold: 1 });
    await api('POST', 'sys/unseal', { key: init.keys_base64[0] });
    const token = init.root_token;
    // The catalog answers once the unseal has finished setting up.
    for (let i = 0; ; i++) {
      try {
        await api('POST', 'sys/plugins/catalog/secret/lease-test', { command: 'lease-test/main.js', sha256, version: 'v1.0.0' }, token);
        break;
      } catch (err) {
        if (i > 50) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    await api('POST', 'sys/mounts/lt', { type: 'lease-test' }, token);
    // record: false: the plugin keeps no revocation records, so the reference read stays a read.
    await api('POST', 'lt/roles/r', { ttl: '1h', record: false }, token);
    await api('POST', 'sys/mounts/kv', { type: 'kv', options: { version: '2' } }, token);
    await api('POST', 'kv/data/x', { data: { v: 'y'.repeat(32) } }, token);
    await api('GET', 'lt/creds/r', null, token);

    // What the core spends with no request at all (timers, health checks): a slow phase pays more of it per request.
    const idleBefore = threadCpuUs(core.pid);
    await new Promise((r) => setTimeout(r, SECS * 1000));
    const idleAfter = threadCpuUs(core.pid);
    const idleMsPerS = (idleAfter.main + idleAfter.other - idleBefore.main - idleBefore.other) / SECS / 1000;

    const phases = { creds: 'lt/creds/r', kv: 'kv/data/x' };
    const rows = [];
    for (let round = 1; round <= 2; round++) {
      for (const [name, p] of Object.entries(phases)) {
        if (ONLY && ONLY !== name) continue;
        const cfg = { url: base + p, headers: { 'X-Vault-Token': token }, concurrency: CONCURRENCY, durationMs: SECS * 1000, warmupMs: 500 };
        const before = threadCpuUs(core.pid);
        const r = JSON.parse(execFileSync(process.execPath, [LOAD, '--config', JSON.stringify(cfg)], { encoding: 'utf8' }).trim().split('\n').pop());
        const after = threadCpuUs(core.pid);
        const per = (k) => Math.round((after[k] - before[k]) / r.finished);
        rows.push(`| GET ${p} | ${round} | ${Math.round(r.okRps)} | ${per('main') + per('other')} | ${per('main')} | ${per('other')} | ${r.non2xx + r.errors} |`);
      }
    }
    console.log(`core: ${ROOT}, c=${CONCURRENCY}, ${SECS} s per phase (CPU per request includes the warm-up)`);
    console.log('| request | round | per s | core CPU µs/req | main thread | other threads | failed |');
    console.log('|---|---|---|---|---|---|---|');
    for (const row of rows) console.log(row);
    console.log(`idle core: ${idleMsPerS.toFixed(1)} ms CPU per s`);
  } finally {
    core.kill('SIGINT');
    await new Promise((r) => core.once('exit', r));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
