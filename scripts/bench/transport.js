'use strict';
/*
 * Round trip of one HandleRequest to a plugin process over the multiplexed
 * stream, with 1 and 32 calls in flight, beside the same handler called
 * in-process (the baseline the hop is measured against), and the idle RSS of
 * the echo fixture plugin process. Runs on the build (`npm run build` first):
 *   node scripts/bench/transport.js [calls] [--json]
 * `--json` prints one JSON object (sections/plugin-runtime.js reads it): runs
 * ({ label, via: 'plugin' | 'in-process', inFlight, callsPerSec, usPerCall }),
 * idleRssKb, afterRssKb. A measurement tool, not a test: it asserts nothing.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const { createMemoryStorage } = require(path.join(ROOT, 'sdk-plugin/dist/host.js'));
// A fixture, not an entry of the SDK: loaded from its build.
const { createEchoFactory } = require(path.join(ROOT, 'sdk-plugin/dist/transport/fixtures/echo-backend.js'));
const { createPluginCatalog } = require(path.join(ROOT, 'core/dist/catalog/catalog.js'));
const { createPluginSupervisor } = require(path.join(ROOT, 'core/dist/supervisor/supervisor.js'));
// The core runs every plugin as one bundled file, the only thing its sandbox may read.
const { bundlePlugin } = require('../bundle-plugin.js');
const { memKb } = require('./proc.js');

const FIXTURE = path.join(ROOT, 'sdk-plugin/dist/transport/fixtures/echo-plugin.js');

const rssKb = (pid) => memKb(pid).rss;

async function measureTransport(calls) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sr-bench-'));
  const catalog = createPluginCatalog({
    store: createMemoryStorage(),
    pluginDirectory: null,
    builtins: [{ type: 'secret', name: 'echo', version: 'v0.1.0+builtin', main: bundlePlugin(FIXTURE, path.join(tmp, 'echo-plugin.js')) }],
  });
  const quiet = { debug() {}, info() {}, warn() {}, error() {} };
  const storages = new Map();
  const storageFor = (u) => storages.get(u) ?? (storages.set(u, createMemoryStorage()), storages.get(u));
  const system = {
    defaultLeaseTtl: async () => 0,
    maxLeaseTtl: async () => 0,
    generatePasswordFromPolicy: async () => '',
    coreVersion: async () => 'bench',
  };
  const sup = createPluginSupervisor({ catalog, logger: { child: () => quiet }, callbacks: { storageFor, systemViewFor: () => system }, runDir: path.join(tmp, 'run') });
  const entry = await catalog.get('secret', 'echo');
  if (!entry) throw new Error('no entry');
  const mount = { path: 'echo/', type: 'echo', uuid: 'bench', accessor: 'echo_b', namespace: '', options: {}, isAuth: false };
  const local = { ...mount, uuid: 'local' };
  try {
    const remote = await sup.mount(entry, mount);
    const inProcess = await createEchoFactory(() => undefined).create({ mount: local, storage: storageFor('local'), system, logger: quiet });
    const pid = sup.pid('bench');
    const req = (m, p, data) => ({
      id: 'b',
      operation: 'update',
      path: p,
      mount: m,
      data,
      client: { remoteAddress: '127.0.0.1', displayName: 'root', tokenAccessor: '', entityId: '', policies: ['root'], metadata: {} },
    });

    const runs = [];
    const run = async (label, via, backend, inFlight, mk) => {
      for (let i = 0; i < 2000; i++) await backend.handleRequest(mk()); // warm-up
      const start = process.hrtime.bigint();
      let next = 0;
      await Promise.all(
        Array.from({ length: inFlight }, async () => {
          while (next++ < calls) await backend.handleRequest(mk());
        }),
      );
      const secs = Number(process.hrtime.bigint() - start) / 1e9;
      runs.push({ label, via, inFlight, callsPerSec: calls / secs, usPerCall: (secs / calls) * inFlight * 1e6 });
    };

    await new Promise((r) => setTimeout(r, 1000));
    const idleRssKb = rssKb(pid);
    for (const inFlight of [1, 32]) {
      await run('echo (small data)', 'in-process', inProcess, inFlight, () => req(local, 'echo', { plaintext: 'aGVsbG8=' }));
      await run('echo (small data)', 'plugin', remote, inFlight, () => req(mount, 'echo', { plaintext: 'aGVsbG8=' }));
      await run('kv write (1 storage callback)', 'in-process', inProcess, inFlight, () => req(local, 'kv/k', { v: 1 }));
      await run('kv write (1 storage callback)', 'plugin', remote, inFlight, () => req(mount, 'kv/k', { v: 1 }));
    }
    await new Promise((r) => setTimeout(r, 2000));
    return { runs, idleRssKb, afterRssKb: rssKb(pid) };
  } finally {
    await sup.shutdown();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const json = args.includes('--json');
  const calls = Number(args.find((a) => /^\d+$/.test(a)) ?? 20_000);
  measureTransport(calls).then((r) => {
    if (json) {
      console.log(JSON.stringify(r));
      return;
    }
    console.log(`idle RSS of the plugin process after start: ${(r.idleRssKb / 1024).toFixed(1)} MiB`);
    for (const x of r.runs) {
      console.log(`${x.label} ${x.via}, ${x.inFlight} in flight: ${Math.round(x.callsPerSec)} calls/s, ${x.usPerCall.toFixed(1)} µs per call round trip`);
    }
    console.log(`RSS of the plugin process after the runs: ${(r.afterRssKb / 1024).toFixed(1)} MiB`);
  }, (err) => {
    console.error(err);
    process.exitCode = 1;
  });
}
