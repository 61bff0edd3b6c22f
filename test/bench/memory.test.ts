/**
 * The bench's memory reading (scripts/bench/proc.js) against the real binary and its plugin
 * processes: the core and every descendant found by ppid, PSS read from smaps_rollup and
 * smaller than RSS (the node binary's shared pages are divided among the processes, not
 * counted once each). No figure is asserted: memory on a shared machine is not a test.
 */
import { startDevServer, type RunningServer } from '../helpers/server';

interface Mem { rss: number; pss: number; uss: number; shared: number }
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { memKb, treeMemKb } = require('../../scripts/bench/proc.js') as {
  memKb(pid: number | undefined): Mem;
  treeMemKb(pid: number): { rss: number; pss: number; uss: number; processes: number };
};

jest.setTimeout(120_000);

let server: RunningServer;
beforeAll(async () => {
  server = await startDevServer();
  // kv is mounted in dev mode; transit adds a second plugin process under the core.
  expect((await server.api('POST', 'sys/mounts/transit', { type: 'transit' })).status).toBe(204);
  expect((await server.api('POST', 'transit/keys/k', {})).status).toBeLessThan(300);
});
afterAll(async () => server?.stop());

test('one process: PSS, RSS and private memory from smaps_rollup; NaN for a process that is gone', () => {
  const core = memKb(server.proc.pid!);
  expect(core.pss).toBeGreaterThan(0);
  expect(core.pss).toBeLessThan(core.rss);
  expect(core.uss).toBeLessThanOrEqual(core.pss);
  expect(core.shared).toBeGreaterThan(0);
  expect(Number.isNaN(memKb(undefined).pss)).toBe(true);
});

test('the core and its plugin processes: every descendant summed', () => {
  const core = memKb(server.proc.pid!);
  const tree = treeMemKb(server.proc.pid!);
  // core, kv plugin, transit plugin
  expect(tree.processes).toBe(3);
  expect(tree.pss).toBeGreaterThan(core.pss);
  expect(tree.pss).toBeLessThan(tree.rss);
  expect(tree.rss).toBeGreaterThan(core.rss);
});
