/**
 * Lease benchmark (a measurement tool, not a test: it asserts only that every lease was
 * issued, restored and revoked). N leases (default 100,000) go through the expiration manager
 * over the real barrier (AES-GCM) on LevelDB in a temporary directory; each figure comes with
 * a reference measured in the same run:
 *   - issue rate (each lease: one call to the test lease plugin, one atomic barrier write);
 *   - manager heap per lease after a restore, beside a bare Map of the same ids to numbers;
 *   - restore time (a new manager over the same store, as after a restart or unseal), beside
 *     a raw LevelDB iteration of the due-index keys that indexes the ids and decrypts nothing;
 *   - revocations per second when every lease falls due at once, each calling the test lease
 *     plugin's revoke handler in its own process (test/fixtures/lease-plugin), beside the same
 *     revoke calls made straight to the plugin at the same concurrency.
 * `--fake-revoker` replaces the plugin by an instant in-process revoker (manager cost alone).
 *
 * `--restore-only` measures restore alone at a scale the issue path cannot reach in a bench
 * (1,000,000 leases: issuing them one gRPC call each would take minutes): the store is seeded
 * with lease bodies, due-index keys and token index entries exactly as `register` writes them
 * (same encoding, keys and barrier), in large batches; then a new manager restores them while a client looks
 * leases up through it (one every 2 ms, one at a time) to show that requests are served meanwhile.
 *
 *   node core/dist/expiration/bench.js [--leases 100000] [--fake-revoker] [--restore-only] [--json]
 * Needs `npm run build` (the plugin is test/fixtures/lease-plugin/dist/main.js).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createMemoryStorage, type Backend, type LogicalRequest, type MountInfo, type SecretSpec, type Storage, type SystemView } from '@strongroom/sdk-plugin/host';
import { createBarrier } from '../barrier/barrier.js';
import { createPluginCatalog } from '../catalog/catalog.js';
import { createPluginSupervisor, type PluginSupervisor } from '../supervisor/supervisor.js';
import { bundledFixture } from '../supervisor/bundled-fixture.js';
import { createLevelPhysical } from '../storage/level.js';
import { createManualClock } from '@strongroom/sdk-plugin/host';
import { createExpirationManager, defaultExpirationOptions, type ExpirationManager } from './expiration-manager.js';
import { DUE_INDEX_COMPLETE_KEY, DUE_INDEX_PREFIX, encodeString, makeLeaseId, newLeaseOps, parseDueIndexKey, type LeaseEntry } from './lease-entry.js';
import type { PhysicalOp } from '../storage/physical.js';

const LEASE_PLUGIN = resolve(__dirname, '../../../test/fixtures/lease-plugin/dist/main.js');
const TTL = 3600;
const ISSUE_IN_FLIGHT = 64;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

function heapAfterGc(): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}

async function parallel(n: number, inFlight: number, fn: (i: number) => Promise<void>): Promise<number> {
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < n) await fn(next++);
    }),
  );
  return performance.now() - t0;
}

export interface LeaseBenchResult {
  leases: number;
  revoker: 'lease-plugin' | 'fake';
  issuePerSec: number;
  /** Manager heap per lease after restore, and a bare Map<id, number> of the same ids. */
  heapBytesPerLease: number;
  mapBytesPerLease: number;
  restoreMs: number;
  /** Raw LevelDB iteration of the same keys, indexing the ids (no decrypt, no decode). */
  rawScanMs: number;
  revocationsPerSec: number;
  /** The same revoke handler called straight, at the manager's per-mount concurrency; 0 with the fake revoker. */
  directRevokesPerSec: number;
  revokeInFlight: number;
  pluginRecordedRevocations: number;
}

export async function measureLeases(n: number, opts: { fakeRevoker?: boolean } = {}): Promise<LeaseBenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'strongroom-lease-bench-'));
  const physical = await createLevelPhysical({ path: join(dir, 'data') });
  const barrier = createBarrier(physical);
  const unsealKey = randomBytes(32);
  await barrier.initialize(unsealKey);
  await barrier.unseal(unsealKey);
  const clock = createManualClock(Date.now());
  const mount: MountInfo = { path: 'lt/', type: 'lease-test', uuid: 'bench-mount', accessor: 'lt_bench', namespace: '', options: {}, isAuth: false };
  const client = { remoteAddress: '127.0.0.1', displayName: 'bench', tokenAccessor: '', entityId: '', policies: ['root'], metadata: {} };
  // The plugin's own storage (its records): in memory, so the figures are the manager's and the hop's.
  const pluginStorage: Storage = createMemoryStorage();
  const system: SystemView = { defaultLeaseTtl: async () => TTL, maxLeaseTtl: async () => 86_400, generatePasswordFromPolicy: async () => '', coreVersion: async () => 'bench' };
  let supervisor: PluginSupervisor | null = null;
  let plugin: Backend | null = null;
  let fakeRevoked = 0;

  const revokeRequest = (lease: Pick<LeaseEntry, 'leaseId' | 'requestPath' | 'secretType' | 'internalData' | 'ttl' | 'issueTime' | 'lastRenewalTime'>): LogicalRequest => ({
    id: 'bench',
    operation: 'revoke',
    path: lease.requestPath,
    mount,
    data: {},
    client,
    secret: {
      leaseId: lease.leaseId,
      secretType: lease.secretType,
      internalData: lease.internalData,
      ttl: lease.ttl,
      increment: 0,
      issueTime: lease.issueTime,
      lastRenewalTime: lease.lastRenewalTime,
    },
  });

  const make = (): ExpirationManager =>
    createExpirationManager({
      store: barrier,
      clock,
      logger: quiet,
      revoker: {
        async revokeSecret(lease) {
          if (plugin) await plugin.handleRequest(revokeRequest(lease));
          else fakeRevoked++;
        },
        async renewSecret() {
          return { ttl: 0 };
        },
      },
      mountTtls: () => ({ defaultTtl: TTL, maxTtl: 86_400 }),
      tokenExists: async () => true,
    });

  try {
    if (!opts.fakeRevoker) {
      const catalog = createPluginCatalog({ store: createMemoryStorage(), pluginDirectory: null, builtins: [{ type: 'secret', name: 'lease-test', version: 'v0.1.0+builtin', main: bundledFixture(LEASE_PLUGIN, dir) }] });
      supervisor = createPluginSupervisor({ catalog, logger: { child: () => quiet }, callbacks: { storageFor: () => pluginStorage, systemViewFor: () => system }, runDir: join(dir, 'run') });
      const entry = await catalog.get('secret', 'lease-test');
      if (!entry) throw new Error('lease-test plugin not in the catalog');
      plugin = await supervisor.mount(entry, mount);
      await plugin.handleRequest({ id: 'b', operation: 'update', path: 'roles/bench', mount, data: { ttl: TTL }, client });
    }

    // Issue: the plugin answers creds/bench with a secret; the manager stores it as a lease.
    let mgr = make();
    await mgr.restore(); // as an unseal does first: on a new store, it marks the due index complete
    const issueMs = await parallel(n, ISSUE_IN_FLIGHT, async (i) => {
      let secret: SecretSpec;
      if (plugin) {
        const resp = await plugin.handleRequest({ id: 'b', operation: 'read', path: 'creds/bench', mount, data: {}, client });
        if (!resp?.secret) throw new Error('the plugin returned no secret');
        secret = resp.secret;
      } else {
        secret = { type: 'cred', ttl: TTL, maxTtl: 0, renewable: true, internalData: { username: `u-${i}`, role: 'bench' } };
      }
      await mgr.register({ mountPath: mount.path, mountUuid: mount.uuid, namespaceId: '', requestPath: 'creds/bench', secret, tokenKey: `h${(i % 5000).toString(16).padStart(8, '0')}` });
    });
    mgr.stop();

    // Reference for memory and restore: iterate the same keys raw, index the ids, decrypt nothing.
    const mapBefore = heapAfterGc();
    const t0 = performance.now();
    let ids: Map<string, number> | null = new Map();
    for await (const key of physical.scanKeys(DUE_INDEX_PREFIX)) {
      const id = parseDueIndexKey(key)?.leaseId;
      if (id !== undefined) ids.set(id, 0);
    }
    const rawScanMs = performance.now() - t0;
    const mapBytes = heapAfterGc() - mapBefore;
    if (ids.size !== n) throw new Error(`raw scan found ${ids.size} of ${n} leases`);
    ids = null;

    const before = heapAfterGc();
    mgr = make();
    const restore = await mgr.restore();
    const after = heapAfterGc();
    if (restore.loaded !== n) throw new Error(`restored ${restore.loaded} of ${n} leases`);

    // Every lease falls due at once.
    clock.advance((TTL + 1) * 1000);
    const t1 = performance.now();
    await mgr.whenIdle();
    const revokeMs = performance.now() - t1;
    if (mgr.stats().revoked !== n) throw new Error(`revoked ${mgr.stats().revoked} of ${n} leases (${mgr.stats().revokeFailures} failures)`);
    mgr.stop();
    const recorded = plugin ? (await pluginStorage.list('revoked/')).length : fakeRevoked;
    if (recorded !== n) throw new Error(`the revoker saw ${recorded} of ${n} revocations`);

    // Reference: the same revoke handler, called straight at the manager's per-mount concurrency.
    const revokeInFlight = defaultExpirationOptions.maxInFlightPerMount;
    let directRevokesPerSec = 0;
    if (plugin) {
      const calls = Math.min(n, 20_000);
      const p = plugin;
      const ms = await parallel(calls, revokeInFlight, async (i) => {
        const username = `direct-${i}`;
        await p.handleRequest(
          revokeRequest({ leaseId: `lt/creds/bench/d${i}`, requestPath: 'creds/bench', secretType: 'cred', internalData: { username, role: 'bench' }, ttl: TTL, issueTime: 0, lastRenewalTime: null }),
        );
      });
      directRevokesPerSec = calls / (ms / 1000);
    }

    return {
      leases: n,
      revoker: plugin ? 'lease-plugin' : 'fake',
      issuePerSec: n / (issueMs / 1000),
      heapBytesPerLease: (after - before) / n,
      mapBytesPerLease: mapBytes / n,
      restoreMs: restore.durationMs,
      rawScanMs,
      revocationsPerSec: n / (revokeMs / 1000),
      directRevokesPerSec,
      revokeInFlight,
      pluginRecordedRevocations: recorded,
    };
  } finally {
    await supervisor?.shutdown();
    await physical.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface RestoreBenchResult {
  leases: number;
  seedPerSec: number;
  heapBytesPerLease: number;
  mapBytesPerLease: number;
  restoreMs: number;
  rawScanMs: number;
  /** Lookups answered through the manager while it restored (one every LOOKUP_EVERY_MS). */
  lookupsDuringRestore: number;
  lookupP99Ms: number;
  lookupMaxMs: number;
  /** Event-loop delay while restoring (perf_hooks histogram). */
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
}

const SEED_BATCH = 2000;
const LOOKUP_EVERY_MS = 2;

/** Restore alone, at scale: seed as `register` stores leases, reopen, restore while serving lookups. */
export async function measureRestore(n: number): Promise<RestoreBenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'strongroom-lease-restore-'));
  const unsealKey = randomBytes(32);
  const dataDir = join(dir, 'data');
  let physical = await createLevelPhysical({ path: dataDir });
  try {
    let barrier = createBarrier(physical);
    await barrier.initialize(unsealKey);
    await barrier.unseal(unsealKey);
    const now = Date.now();
    const sample: string[] = [];
    const t0 = performance.now();
    for (let i = 0; i < n; i += SEED_BATCH) {
      const ops: PhysicalOp[] = [];
      for (let j = i; j < Math.min(n, i + SEED_BATCH); j++) {
        const leaseId = makeLeaseId('lt/', 'creds/bench', '');
        if (j % Math.ceil(n / 1000) === 0) sample.push(leaseId);
        const entry: LeaseEntry = {
          v: 1,
          leaseId,
          mountPath: 'lt/',
          mountUuid: 'bench-mount',
          namespaceId: '',
          requestPath: 'creds/bench',
          secretType: 'cred',
          internalData: { username: `v-bench-${randomBytes(8).toString('hex')}`, role: 'bench' },
          tokenKey: `h${(j % 5000).toString(16).padStart(8, '0')}`,
          issueTime: now,
          expireTime: now + TTL * 1000 + (j % 3600) * 1000,
          lastRenewalTime: null,
          renewable: true,
          ttl: TTL,
          maxTtl: 86_400,
          revokeAttempts: 0,
          irrevocableReason: null,
        };
        ops.push(...newLeaseOps(entry));
      }
      await barrier.batch(ops);
    }
    // As the first unseal of a new store leaves it: every lease has its due-index key.
    await barrier.put(DUE_INDEX_COMPLETE_KEY, encodeString('1'));
    const seedMs = performance.now() - t0;
    // A restart: LevelDB reopened (its log folded into tables), a fresh barrier unsealed.
    await physical.close();
    physical = await createLevelPhysical({ path: dataDir });
    barrier = createBarrier(physical);
    await barrier.unseal(unsealKey);

    const mapBefore = heapAfterGc();
    const t1 = performance.now();
    let ids: Map<string, number> | null = new Map();
    for await (const key of physical.scanKeys(DUE_INDEX_PREFIX)) {
      const id = parseDueIndexKey(key)?.leaseId;
      if (id !== undefined) ids.set(id, 0);
    }
    const rawScanMs = performance.now() - t1;
    const mapBytes = heapAfterGc() - mapBefore;
    if (ids.size !== n) throw new Error(`raw scan found ${ids.size} of ${n} leases`);
    ids = null;

    const mgr = createExpirationManager({
      store: barrier,
      clock: createManualClock(now),
      logger: quiet,
      revoker: { async revokeSecret() {}, async renewSecret() { return { ttl: 0 }; } },
      mountTtls: () => ({ defaultTtl: TTL, maxTtl: 86_400 }),
      tokenExists: async () => true,
    });
    const before = heapAfterGc();
    const loop = monitorEventLoopDelay({ resolution: 5 });
    loop.enable();
    let done = false;
    const latencies: number[] = [];
    const serving = (async () => {
      for (let i = 0; !done; i++) {
        const s0 = performance.now();
        const found = await mgr.lookup(sample[i % sample.length]!);
        if (found.ttl <= 0) throw new Error('lookup during restore returned an expired lease');
        latencies.push(performance.now() - s0);
        // A steady client, not a flood: one lookup every LOOKUP_EVERY_MS (a flood would measure the
        // restore under saturation; a cached lookup would also complete in microtasks alone).
        await new Promise((r) => setTimeout(r, LOOKUP_EVERY_MS));
      }
    })();
    const restore = await mgr.restore();
    done = true;
    await serving;
    loop.disable();
    const after = heapAfterGc();
    if (restore.loaded !== n) throw new Error(`restored ${restore.loaded} of ${n} leases`);
    mgr.stop();
    latencies.sort((a, b) => a - b);
    return {
      leases: n,
      seedPerSec: n / (seedMs / 1000),
      heapBytesPerLease: (after - before) / n,
      mapBytesPerLease: mapBytes / n,
      restoreMs: restore.durationMs,
      rawScanMs,
      lookupsDuringRestore: latencies.length,
      lookupP99Ms: latencies[Math.floor(latencies.length * 0.99)] ?? NaN,
      lookupMaxMs: latencies[latencies.length - 1] ?? NaN,
      loopDelayP99Ms: loop.percentile(99) / 1e6,
      loopDelayMaxMs: loop.max / 1e6,
    };
  } finally {
    await physical.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module && process.argv.includes('--restore-only')) {
  const n = Number(argValue('--leases') ?? 1_000_000);
  measureRestore(n).then(
    (r) => {
      if (process.argv.includes('--json')) {
        console.log(JSON.stringify(r));
        return;
      }
      const int = (x: number) => Math.round(x).toLocaleString('en-US');
      console.log(`leases seeded:       ${int(r.leases)} at ${int(r.seedPerSec)}/s`);
      console.log(`heap per lease:      ${int(r.heapBytesPerLease)} B (a bare Map of the ids: ${int(r.mapBytesPerLease)} B)`);
      console.log(`restore:             ${int(r.restoreMs)} ms (raw LevelDB iteration of the keys: ${int(r.rawScanMs)} ms)`);
      console.log(`served meanwhile:    ${int(r.lookupsDuringRestore)} lookups, p99 ${r.lookupP99Ms.toFixed(1)} ms, max ${r.lookupMaxMs.toFixed(1)} ms; event-loop delay p99 ${r.loopDelayP99Ms.toFixed(1)} ms, max ${r.loopDelayMaxMs.toFixed(1)} ms`);
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
} else if (require.main === module) {
  const n = Number(argValue('--leases') ?? 100_000);
  measureLeases(n, { fakeRevoker: process.argv.includes('--fake-revoker') }).then(
    (r) => {
      if (process.argv.includes('--json')) {
        console.log(JSON.stringify(r));
        return;
      }
      const int = (x: number) => Math.round(x).toLocaleString('en-US');
      console.log(`leases issued:       ${int(r.leases)} at ${int(r.issuePerSec)}/s (revoker: ${r.revoker})`);
      console.log(`heap per lease:      ${int(r.heapBytesPerLease)} B (a bare Map of the ids: ${int(r.mapBytesPerLease)} B)`);
      console.log(`restore:             ${int(r.restoreMs)} ms (raw LevelDB iteration of the keys: ${int(r.rawScanMs)} ms)`);
      console.log(`mass expiry:         ${int(r.revocationsPerSec)} revocations/s (direct plugin revokes at ${r.revokeInFlight} in flight: ${int(r.directRevokesPerSec)}/s)`);
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
