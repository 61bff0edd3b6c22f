/**
 * Round trip of one HandleRequest over the multiplexed stream, with 1 and 32
 * calls in flight, and the idle RSS of the echo fixture plugin process.
 * Run after `npx tsc -b sdk-plugin core`:
 *   node core/dist/plugins/bench/transport-bench.js [calls]
 * A measurement tool, not a test: it asserts nothing.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createMemoryStorage, type LogicalRequest, type MountInfo, type Storage, type SystemView } from '@strongroom/sdk-plugin';
import { createPluginCatalog } from '../catalog.js';
import { createPluginSupervisor } from '../supervisor.js';

const FIXTURE = path.resolve(__dirname, '../../../../sdk-plugin/dist/transport/fixtures/echo-plugin.js');

function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

async function main(): Promise<void> {
  const calls = Number(process.argv[2] ?? 20_000);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sr-bench-'));
  const catalog = createPluginCatalog({
    store: createMemoryStorage(),
    pluginDirectory: null,
    builtins: [{ type: 'secret', name: 'echo', version: 'v0.1.0+builtin', main: FIXTURE }],
  });
  const quiet = { debug() {}, info() {}, warn() {}, error() {} };
  const storages = new Map<string, Storage>();
  const system: SystemView = {
    defaultLeaseTtl: async () => 0,
    maxLeaseTtl: async () => 0,
    generatePasswordFromPolicy: async () => '',
    coreVersion: async () => 'bench',
  };
  const sup = createPluginSupervisor({
    catalog,
    logger: { child: () => quiet },
    callbacks: {
      storageFor: (u) => storages.get(u) ?? (storages.set(u, createMemoryStorage()), storages.get(u) as Storage),
      systemViewFor: () => system,
    },
    runDir: path.join(tmp, 'run'),
  });
  const entry = await catalog.get('secret', 'echo');
  if (!entry) throw new Error('no entry');
  const mount: MountInfo = { path: 'echo/', type: 'echo', uuid: 'bench', accessor: 'echo_b', namespace: '', options: {}, isAuth: false };
  const backend = await sup.mount(entry, mount);
  const pid = sup.pid('bench') as number;
  const req = (p: string, data: Record<string, unknown>): LogicalRequest => ({
    id: 'b',
    operation: 'update',
    path: p,
    mount,
    data,
    client: { remoteAddress: '127.0.0.1', displayName: 'root', tokenAccessor: '', entityId: '', policies: ['root'], metadata: {} },
  });

  const run = async (label: string, inFlight: number, mk: () => LogicalRequest) => {
    for (let i = 0; i < 2000; i++) await backend.handleRequest(mk()); // warm-up
    const start = process.hrtime.bigint();
    let next = 0;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next++ < calls) await backend.handleRequest(mk());
      }),
    );
    const secs = Number(process.hrtime.bigint() - start) / 1e9;
    const perSec = calls / secs;
    console.log(`${label}, ${inFlight} in flight: ${Math.round(perSec)} calls/s, ${((secs / calls) * inFlight * 1e6).toFixed(0)} µs per call round trip`);
  };

  await new Promise((r) => setTimeout(r, 1000));
  console.log(`idle RSS of the plugin process after start: ${(rssKb(pid) / 1024).toFixed(1)} MiB`);
  await run('echo (small data)', 1, () => req('echo', { plaintext: 'aGVsbG8=' }));
  await run('echo (small data)', 32, () => req('echo', { plaintext: 'aGVsbG8=' }));
  await run('kv write (1 storage callback)', 1, () => req('kv/k', { v: 1 }));
  await run('kv write (1 storage callback)', 32, () => req('kv/k', { v: 1 }));
  await new Promise((r) => setTimeout(r, 2000));
  console.log(`RSS of the plugin process after the runs: ${(rssKb(pid) / 1024).toFixed(1)} MiB`);
  await sup.shutdown();
  fs.rmSync(tmp, { recursive: true, force: true });
}

void main();
