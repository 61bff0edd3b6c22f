/**
 * Lease benchmark (a measurement tool, not a test: it asserts only that every lease was
 * issued, restored and revoked). N leases (default 100,000) go through the expiration manager
 * over the real barrier (AES-GCM) on LevelDB in a temporary directory; each figure comes with
 * a reference measured in the same run:
 *   - issue rate (each lease: one call to the test lease plugin, one atomic barrier write);
 *   - manager heap per lease after a restore, beside a bare Map of the same ids to numbers;
 *   - restore time (a new manager over the same store, as after a restart or unseal), beside
 *     a raw LevelDB iteration of the same keys that indexes the ids and decrypts nothing;
 *   - revocations per second when every lease falls due at once, each calling the test lease
 *     plugin's revoke handler in its own process (test/fixtures/lease-plugin), beside the same
 *     revoke calls made straight to the plugin at the same concurrency.
 * `--fake-revoker` replaces the plugin by an instant in-process revoker (manager cost alone).
 *
 *   node core/dist/expiration/bench.js [--leases 100000] [--fake-revoker] [--json]
 * Needs `npm run build` (the plugin is test/fixtures/lease-plugin/dist/main.js).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createMemoryStorage, type Backend, type LogicalRequest, type MountInfo, type SecretSpec, type Storage, type SystemView } from '@strongroom/sdk-plugin/host';
import { createBarrier } from '../barrier/barrier.js';
import { createPluginCatalog } from '../plugins/catalog.js';
import { createPluginSupervisor, type PluginSupervisor } from '../plugins/supervisor.js';
import { pluginRuntimeDirs } from '../plugins/builtins.js';
import { createLevelPhysical } from '../storage/level.js';
import { createManualClock } from '@strongroom/sdk-plugin/host';
import { createExpirationManager, defaultExpirationOptions, type ExpirationManager } from './expiration-manager.js';
import { LEASE_BODY_PREFIX, leaseIdFromBodyKey, type LeaseEntry } from './lease-entry.js';

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
      const catalog = createPluginCatalog({ store: createMemoryStorage(), pluginDirectory: null, builtins: [{ type: 'secret', name: 'lease-test', version: 'v0.1.0+builtin', main: LEASE_PLUGIN }] });
      supervisor = createPluginSupervisor({ catalog, logger: { child: () => quiet }, callbacks: { storageFor: () => pluginStorage, systemViewFor: () => system }, runDir: join(dir, 'run'), runtimeDirs: pluginRuntimeDirs() });
      const entry = await catalog.get('secret', 'lease-test');
      if (!entry) throw new Error('lease-test plugin not in the catalog');
      plugin = await supervisor.mount(entry, mount);
      await plugin.handleRequest({ id: 'b', operation: 'update', path: 'roles/bench', mount, data: { ttl: TTL }, client });
    }

    // Issue: the plugin answers creds/bench with a secret; the manager stores it as a lease.
    let mgr = make();
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
    for await (const { key } of physical.scan(LEASE_BODY_PREFIX)) {
      const id = leaseIdFromBodyKey(key);
      if (id !== null) ids.set(id, 0);
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

if (require.main === module) {
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
