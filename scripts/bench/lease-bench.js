'use strict';
/*
 * Lease benchmark (a measurement tool, not a test: it asserts only that every lease was
 * issued, restored and revoked). N leases (default 100,000) go through the expiration manager
 * over the real barrier (AES-GCM) on LevelDB in a temporary directory; each figure comes with
 * a reference measured in the same run:
 *   - issue rate (each lease: one call to the test lease plugin, one atomic barrier write);
 *   - manager heap per lease after a restore, beside a bare Map of the same ids to numbers;
 *   - restore time (a new manager over the same store, as after a restart or unseal), beside
 *     a raw LevelDB iteration of the due-index keys that indexes the ids and decrypts nothing
 *     (the same paged iteration, `keyPages`, that restore reads through);
 *   - revocations per second when every lease falls due at once, each calling the test lease
 *     plugin's revoke handler in its own process (test/fixtures/lease-plugin), beside the same
 *     revoke calls made straight to the plugin at the same concurrency.
 * `--fake-revoker` replaces the plugin by an instant in-process revoker (manager cost alone).
 *
 * `--restore-only` measures restore alone at a scale the issue path cannot reach in a bench
 * (1,000,000 leases: issuing them one gRPC call each would take minutes): the store is seeded
 * with lease bodies, due-index keys and token index entries exactly as `register` writes them
 * (same encoding, keys and barrier), in large batches; then a new manager restores them while a
 * client looks leases up through it (one every 2 ms, one at a time) to show that requests are
 * served meanwhile.
 *
 *   node scripts/bench/lease-bench.js [--leases 100000] [--fake-revoker] [--restore-only] [--json]
 * Runs the built core (core/dist): `npm run build` first (the plugin is
 * test/fixtures/lease-plugin/dist/main.js). The sections leases.js and leases-1m.js run it.
 */
const { join, resolve } = require('node:path');
const { setFlagsFromString } = require('node:v8');
const { runInNewContext } = require('node:vm');
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { randomBytes } = require('node:crypto');
const { monitorEventLoopDelay } = require('node:perf_hooks');
const { createLevelPhysical } = require('@strongroom/core/dist/storage/level.js');
const { createBarrier } = require('@strongroom/core/dist/barrier/barrier.js');
const { keyPages } = require('@strongroom/core/dist/storage/keys.js');
const { createManualClock, createMemoryStorage } = require('@strongroom/sdk-plugin/host');
const { createExpirationManager, defaultExpirationOptions } = require('@strongroom/core/dist/expiration/expiration-manager.js');
const { createPluginCatalog } = require('@strongroom/core/dist/catalog/catalog.js');
const { createPluginSupervisor } = require('@strongroom/core/dist/supervisor/supervisor.js');
const { bundledFixture } = require('@strongroom/core/dist/supervisor/bundled-fixture.js');
const { DUE_INDEX_PREFIX, makeLeaseId, newLeaseOps, parseDueIndexKey } = require('@strongroom/core/dist/expiration/lease-entry.js');
const LEASE_PLUGIN = resolve(__dirname, "../../test/fixtures/lease-plugin/dist/main.js");
const TTL = 3600;
const ISSUE_IN_FLIGHT = 64;
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc");
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
function heapAfterGc() {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}
function argValue(name) {
  const i = process.argv.indexOf(name);
  return i === -1 ? void 0 : process.argv[i + 1];
}
async function parallel(n, inFlight, fn) {
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < n) await fn(next++);
    })
  );
  return performance.now() - t0;
}
async function measureLeases(n, opts = {}) {
  const dir = mkdtempSync(join(tmpdir(), "strongroom-lease-bench-"));
  const physical = await createLevelPhysical({ path: join(dir, "data") });
  const barrier = createBarrier(physical);
  const unsealKey = randomBytes(32);
  await barrier.initialize(unsealKey);
  await barrier.unseal(unsealKey);
  const clock = createManualClock(Date.now());
  const mount = { path: "lt/", type: "lease-test", uuid: "bench-mount", accessor: "lt_bench", namespace: "", options: {}, isAuth: false };
  const client = { remoteAddress: "127.0.0.1", displayName: "bench", tokenAccessor: "", entityId: "", policies: ["root"], metadata: {} };
  const pluginStorage = createMemoryStorage();
  const system = { defaultLeaseTtl: async () => TTL, maxLeaseTtl: async () => 86400, generatePasswordFromPolicy: async () => "", coreVersion: async () => "bench" };
  let supervisor = null;
  let plugin = null;
  let fakeRevoked = 0;
  const revokeRequest = (lease) => ({
    id: "bench",
    operation: "revoke",
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
      lastRenewalTime: lease.lastRenewalTime
    }
  });
  const make = () => createExpirationManager({
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
      }
    },
    mountTtls: () => ({ defaultTtl: TTL, maxTtl: 86400 }),
    tokenExists: async () => true
  });
  try {
    if (!opts.fakeRevoker) {
      const catalog = createPluginCatalog({ store: createMemoryStorage(), pluginDirectory: null, builtins: [{ type: "secret", name: "lease-test", version: "v0.1.0+builtin", main: bundledFixture(LEASE_PLUGIN, dir) }] });
      supervisor = createPluginSupervisor({ catalog, logger: { child: () => quiet }, callbacks: { storageFor: () => pluginStorage, systemViewFor: () => system }, runDir: join(dir, "run") });
      const entry = await catalog.get("secret", "lease-test");
      if (!entry) throw new Error("lease-test plugin not in the catalog");
      plugin = await supervisor.mount(entry, mount);
      await plugin.handleRequest({ id: "b", operation: "update", path: "roles/bench", mount, data: { ttl: TTL }, client });
    }
    let mgr = make();
    await mgr.restore();
    const issueMs = await parallel(n, ISSUE_IN_FLIGHT, async (i) => {
      let secret;
      if (plugin) {
        const resp = await plugin.handleRequest({ id: "b", operation: "read", path: "creds/bench", mount, data: {}, client });
        if (!resp?.secret) throw new Error("the plugin returned no secret");
        secret = resp.secret;
      } else {
        secret = { type: "cred", ttl: TTL, maxTtl: 0, renewable: true, internalData: { username: `u-${i}`, role: "bench" } };
      }
      await mgr.register({ mountPath: mount.path, mountUuid: mount.uuid, namespaceId: "", requestPath: "creds/bench", secret, tokenKey: `h${(i % 5e3).toString(16).padStart(8, "0")}` });
    });
    mgr.stop();
    const mapBefore = heapAfterGc();
    const t0 = performance.now();
    let ids = /* @__PURE__ */ new Map();
    for await (const page of keyPages(physical, DUE_INDEX_PREFIX)) {
      for (const key of page) {
        const id = parseDueIndexKey(key)?.leaseId;
        if (id !== void 0) ids.set(id, 0);
      }
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
    clock.advance((TTL + 1) * 1e3);
    const t1 = performance.now();
    await mgr.whenIdle();
    const revokeMs = performance.now() - t1;
    if (mgr.stats().revoked !== n) throw new Error(`revoked ${mgr.stats().revoked} of ${n} leases (${mgr.stats().revokeFailures} failures)`);
    mgr.stop();
    const recorded = plugin ? (await pluginStorage.list("revoked/")).length : fakeRevoked;
    if (recorded !== n) throw new Error(`the revoker saw ${recorded} of ${n} revocations`);
    const revokeInFlight = defaultExpirationOptions.maxInFlightPerMount;
    let directRevokesPerSec = 0;
    if (plugin) {
      const calls = Math.min(n, 2e4);
      const p = plugin;
      const ms = await parallel(calls, revokeInFlight, async (i) => {
        const username = `direct-${i}`;
        await p.handleRequest(
          revokeRequest({ leaseId: `lt/creds/bench/d${i}`, requestPath: "creds/bench", secretType: "cred", internalData: { username, role: "bench" }, ttl: TTL, issueTime: 0, lastRenewalTime: null })
        );
      });
      directRevokesPerSec = calls / (ms / 1e3);
    }
    return {
      leases: n,
      revoker: plugin ? "lease-plugin" : "fake",
      issuePerSec: n / (issueMs / 1e3),
      heapBytesPerLease: (after - before) / n,
      mapBytesPerLease: mapBytes / n,
      restoreMs: restore.durationMs,
      rawScanMs,
      revocationsPerSec: n / (revokeMs / 1e3),
      directRevokesPerSec,
      revokeInFlight,
      pluginRecordedRevocations: recorded
    };
  } finally {
    await supervisor?.shutdown();
    await physical.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
const SEED_BATCH = 2000;
const LOOKUP_EVERY_MS = 2;
async function measureRestore(n) {
  const dir = mkdtempSync(join(tmpdir(), "strongroom-lease-restore-"));
  const unsealKey = randomBytes(32);
  const dataDir = join(dir, "data");
  let physical = await createLevelPhysical({ path: dataDir });
  try {
    let barrier = createBarrier(physical);
    await barrier.initialize(unsealKey);
    await barrier.unseal(unsealKey);
    const now = Date.now();
    const sample = [];
    const t0 = performance.now();
    for (let i = 0; i < n; i += SEED_BATCH) {
      const ops = [];
      for (let j = i; j < Math.min(n, i + SEED_BATCH); j++) {
        const leaseId = makeLeaseId("lt/", "creds/bench", "");
        if (j % Math.ceil(n / 1e3) === 0) sample.push(leaseId);
        const entry = {
          v: 1,
          leaseId,
          mountPath: "lt/",
          mountUuid: "bench-mount",
          namespaceId: "",
          requestPath: "creds/bench",
          secretType: "cred",
          internalData: { username: `v-bench-${randomBytes(8).toString("hex")}`, role: "bench" },
          tokenKey: `h${(j % 5e3).toString(16).padStart(8, "0")}`,
          issueTime: now,
          expireTime: now + TTL * 1e3 + j % 3600 * 1e3,
          lastRenewalTime: null,
          renewable: true,
          ttl: TTL,
          maxTtl: 86400,
          revokeAttempts: 0,
          irrevocableReason: null
        };
        ops.push(...newLeaseOps(entry));
      }
      await barrier.batch(ops);
    }
    const seedMs = performance.now() - t0;
    await physical.close();
    physical = await createLevelPhysical({ path: dataDir });
    barrier = createBarrier(physical);
    await barrier.unseal(unsealKey);
    const mapBefore = heapAfterGc();
    const t1 = performance.now();
    let ids = /* @__PURE__ */ new Map();
    for await (const page of keyPages(physical, DUE_INDEX_PREFIX)) {
      for (const key of page) {
        const id = parseDueIndexKey(key)?.leaseId;
        if (id !== void 0) ids.set(id, 0);
      }
    }
    const rawScanMs = performance.now() - t1;
    const mapBytes = heapAfterGc() - mapBefore;
    if (ids.size !== n) throw new Error(`raw scan found ${ids.size} of ${n} leases`);
    ids = null;
    const mgr = createExpirationManager({
      store: barrier,
      clock: createManualClock(now),
      logger: quiet,
      revoker: { async revokeSecret() {
      }, async renewSecret() {
        return { ttl: 0 };
      } },
      mountTtls: () => ({ defaultTtl: TTL, maxTtl: 86400 }),
      tokenExists: async () => true
    });
    const before = heapAfterGc();
    const loop = monitorEventLoopDelay({ resolution: 5 });
    loop.enable();
    let done = false;
    const latencies = [];
    const serving = (async () => {
      for (let i = 0; !done; i++) {
        const s0 = performance.now();
        const found = await mgr.lookup(sample[i % sample.length]);
        if (found.ttl <= 0) throw new Error("lookup during restore returned an expired lease");
        latencies.push(performance.now() - s0);
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
      seedPerSec: n / (seedMs / 1e3),
      heapBytesPerLease: (after - before) / n,
      mapBytesPerLease: mapBytes / n,
      restoreMs: restore.durationMs,
      rawScanMs,
      lookupsDuringRestore: latencies.length,
      lookupP99Ms: latencies[Math.floor(latencies.length * 0.99)] ?? NaN,
      lookupMaxMs: latencies[latencies.length - 1] ?? NaN,
      loopDelayP99Ms: loop.percentile(99) / 1e6,
      loopDelayMaxMs: loop.max / 1e6
    };
  } finally {
    await physical.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
if (require.main === module && process.argv.includes("--restore-only")) {
  const n = Number(argValue("--leases") ?? 1e6);
  measureRestore(n).then(
    (r) => {
      if (process.argv.includes("--json")) {
        console.log(JSON.stringify(r));
        return;
      }
      const int = (x) => Math.round(x).toLocaleString("en-US");
      console.log(`leases seeded:       ${int(r.leases)} at ${int(r.seedPerSec)}/s`);
      console.log(`heap per lease:      ${int(r.heapBytesPerLease)} B (a bare Map of the ids: ${int(r.mapBytesPerLease)} B)`);
      console.log(`restore:             ${int(r.restoreMs)} ms (raw LevelDB iteration of the keys: ${int(r.rawScanMs)} ms)`);
      console.log(`served meanwhile:    ${int(r.lookupsDuringRestore)} lookups, p99 ${r.lookupP99Ms.toFixed(1)} ms, max ${r.lookupMaxMs.toFixed(1)} ms; event-loop delay p99 ${r.loopDelayP99Ms.toFixed(1)} ms, max ${r.loopDelayMaxMs.toFixed(1)} ms`);
    },
    (err) => {
      console.error(err);
      process.exit(1);
    }
  );
} else if (require.main === module) {
  const n = Number(argValue("--leases") ?? 1e5);
  measureLeases(n, { fakeRevoker: process.argv.includes("--fake-revoker") }).then(
    (r) => {
      if (process.argv.includes("--json")) {
        console.log(JSON.stringify(r));
        return;
      }
      const int = (x) => Math.round(x).toLocaleString("en-US");
      console.log(`leases issued:       ${int(r.leases)} at ${int(r.issuePerSec)}/s (revoker: ${r.revoker})`);
      console.log(`heap per lease:      ${int(r.heapBytesPerLease)} B (a bare Map of the ids: ${int(r.mapBytesPerLease)} B)`);
      console.log(`restore:             ${int(r.restoreMs)} ms (raw LevelDB iteration of the keys: ${int(r.rawScanMs)} ms)`);
      console.log(`mass expiry:         ${int(r.revocationsPerSec)} revocations/s (direct plugin revokes at ${r.revokeInFlight} in flight: ${int(r.directRevokesPerSec)}/s)`);
    },
    (err) => {
      console.error(err);
      process.exit(1);
    }
  );
}

module.exports = { measureLeases, measureRestore };
