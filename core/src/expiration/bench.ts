/**
 * Lease benchmark (a script, not a test): issues N leases (default 100,000) through the
 * expiration manager with an instant fake revoker, then reports
 *   - issue rate,
 *   - resident heap bytes per lease after a restore (id -> due index + heap, nothing else),
 *   - restore time (a new manager over the same store, as after a restart or unseal),
 *   - revocations per second when every lease falls due at once.
 * Storage is LevelDB in a temporary directory (`--inmem` for the in-memory store). There is
 * no barrier here, so restore excludes the ~4 us/lease of AES-GCM decrypt the real core adds.
 *
 *   node core/dist/expiration/bench.js [--leases 100000] [--inmem] [--in-flight 16]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createInmemPhysical } from '../storage/inmem.js';
import { createLevelPhysical } from '../storage/level.js';
import type { Physical } from '../storage/physical.js';
import { createManualClock } from './clock.js';
import { createExpirationManager, type ExpirationManager } from './expiration-manager.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const quietLogger = { debug() {}, info() {}, warn() {}, error() {} };

function heapAfterGc(): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}

async function main(): Promise<void> {
  const n = Number(argValue('--leases') ?? 100_000);
  const inmem = process.argv.includes('--inmem');
  const inFlight = argValue('--in-flight') ? Number(argValue('--in-flight')) : undefined;
  const dir = inmem ? null : mkdtempSync(join(tmpdir(), 'strongroom-lease-bench-'));
  const store: Physical = dir ? await createLevelPhysical({ path: dir }) : createInmemPhysical();
  const clock = createManualClock(Date.now());
  let revoked = 0;
  const make = (): ExpirationManager =>
    createExpirationManager({
      store,
      clock,
      logger: quietLogger,
      revoker: {
        async revokeSecret() {
          revoked++;
        },
        async renewSecret() {
          return { ttl: 0 };
        },
      },
      mountTtls: () => ({ defaultTtl: 3600, maxTtl: 86_400 }),
      tokenExists: async () => true,
      ...(inFlight ? { options: { maxInFlight: inFlight, maxInFlightPerMount: Math.max(1, inFlight >> 1) } } : {}),
    });

  try {
    const mounts = ['database/', 'rabbitmq/', 'ldap/', 'ssh/'];
    let mgr = make();
    const t0 = performance.now();
    let next = 0;
    // 64 registrations in flight: the store's group commit shares fsyncs, as under real load.
    const worker = async (): Promise<void> => {
      while (next < n) {
        const i = next++;
        const mountPath = mounts[i % mounts.length]!;
        await mgr.register({
          mountPath,
          mountUuid: `uuid-${mountPath}`,
          namespaceId: '',
          requestPath: `creds/role-${i % 50}`,
          tokenKey: `h${(i % 5000).toString(16).padStart(8, '0')}`,
          secret: { type: 'creds', ttl: 3600, maxTtl: 0, renewable: true, internalData: { username: `v-role-${i}`, revocation_statement: 'DROP ROLE' } },
        });
      }
    };
    await Promise.all(Array.from({ length: 64 }, worker));
    const issueMs = performance.now() - t0;
    mgr.stop();

    const before = heapAfterGc();
    mgr = make();
    const restore = await mgr.restore();
    const after = heapAfterGc();
    if (restore.loaded !== n) throw new Error(`restored ${restore.loaded} of ${n} leases`);

    clock.advance(3601 * 1000);
    const t1 = performance.now();
    await mgr.whenIdle();
    const revokeMs = performance.now() - t1;
    if (revoked !== n) throw new Error(`revoked ${revoked} of ${n} leases`);
    mgr.stop();

    const result = {
      leases: n,
      store: inmem ? 'inmem' : 'level',
      issuePerSec: Math.round(n / (issueMs / 1000)),
      heapBytesPerLease: Math.round((after - before) / n),
      restoreMs: Math.round(restore.durationMs),
      restoreUsPerLease: Number(((restore.durationMs * 1000) / n).toFixed(1)),
      revocationsPerSec: Math.round(n / (revokeMs / 1000)),
    };
    console.log(`leases issued:        ${n} (${result.store}) at ${result.issuePerSec}/s`);
    console.log(`resident heap/lease:  ${result.heapBytesPerLease} bytes (goal <= 512)`);
    console.log(`restore:              ${result.restoreMs} ms, ${result.restoreUsPerLease} us/lease (goal <= ~32 us/lease)`);
    console.log(`mass expiry:          ${result.revocationsPerSec} revocations/s`);
    console.log(JSON.stringify(result));
  } finally {
    await store.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
