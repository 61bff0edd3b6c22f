/**
 * Round trip of one HandleRequest to a plugin process over the multiplexed
 * stream, with 1 and 32 calls in flight, beside the same handler called
 * in-process (the baseline the hop is measured against), and the idle RSS of
 * the echo fixture plugin process. Run after `npx tsc -b sdk-plugin core`:
 *   node core/dist/plugins/bench/transport-bench.js [calls] [--json]
 * `--json` prints one JSON object (scripts/bench/sections/plugin-runtime.js reads it).
 * A measurement tool, not a test: it asserts nothing.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createMemoryStorage, type Backend, type LogicalRequest, type MountInfo, type Storage, type SystemView } from '@strongroom/sdk-plugin/host';
// A fixture, not an entry of the SDK: loaded from its build, as FIXTURE below is.
import { createEchoFactory } from '../../../../sdk-plugin/dist/transport/fixtures/echo-backend.js';
import { createPluginCatalog } from '../catalog.js';
import { createPluginSupervisor } from '../supervisor.js';
import { bundledFixture } from './bundle.js';

const FIXTURE = path.resolve(__dirname, '../../../../sdk-plugin/dist/transport/fixtures/echo-plugin.js');

export interface TransportRun {
  label: string;
  /** 'plugin': through the supervisor and the plugin process; 'in-process': the same handler called directly. */
  via: 'plugin' | 'in-process';
  inFlight: number;
  callsPerSec: number;
  /** Mean time one call takes from send to answer, at this number in flight. */
  usPerCall: number;
}

export interface TransportResult {
  runs: TransportRun[];
  idleRssKb: number;
  afterRssKb: number;
}

function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

export async function measureTransport(calls: number): Promise<TransportResult> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sr-bench-'));
  const catalog = createPluginCatalog({
    store: createMemoryStorage(),
    pluginDirectory: null,
    builtins: [{ type: 'secret', name: 'echo', version: 'v0.1.0+builtin', main: bundledFixture(FIXTURE, tmp) }],
  });
  const quiet = { debug() {}, info() {}, warn() {}, error() {} };
  const storages = new Map<string, Storage>();
  const storageFor = (u: string) => storages.get(u) ?? (storages.set(u, createMemoryStorage()), storages.get(u) as Storage);
  const system: SystemView = {
    defaultLeaseTtl: async () => 0,
    maxLeaseTtl: async () => 0,
    generatePasswordFromPolicy: async () => '',
    coreVersion: async () => 'bench',
  };
  const sup = createPluginSupervisor({ catalog, logger: { child: () => quiet }, callbacks: { storageFor, systemViewFor: () => system }, runDir: path.join(tmp, 'run') });
  const entry = await catalog.get('secret', 'echo');
  if (!entry) throw new Error('no entry');
  const mount: MountInfo = { path: 'echo/', type: 'echo', uuid: 'bench', accessor: 'echo_b', namespace: '', options: {}, isAuth: false };
  const local: MountInfo = { ...mount, uuid: 'local' };
  try {
    const remote = await sup.mount(entry, mount);
    const inProcess = await createEchoFactory(() => undefined).create({ mount: local, storage: storageFor('local'), system, logger: quiet });
    const pid = sup.pid('bench') as number;
    const req = (m: MountInfo, p: string, data: Record<string, unknown>): LogicalRequest => ({
      id: 'b',
      operation: 'update',
      path: p,
      mount: m,
      data,
      client: { remoteAddress: '127.0.0.1', displayName: 'root', tokenAccessor: '', entityId: '', policies: ['root'], metadata: {} },
    });

    const runs: TransportRun[] = [];
    const run = async (label: string, via: TransportRun['via'], backend: Backend, inFlight: number, mk: () => LogicalRequest) => {
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
  void measureTransport(calls).then((r) => {
    if (json) {
      console.log(JSON.stringify(r));
      return;
    }
    console.log(`idle RSS of the plugin process after start: ${(r.idleRssKb / 1024).toFixed(1)} MiB`);
    for (const x of r.runs) {
      console.log(`${x.label} ${x.via}, ${x.inFlight} in flight: ${Math.round(x.callsPerSec)} calls/s, ${x.usPerCall.toFixed(1)} µs per call round trip`);
    }
    console.log(`RSS of the plugin process after the runs: ${(r.afterRssKb / 1024).toFixed(1)} MiB`);
  });
}
