import { StrongroomError, badRequest, unrecoverable, type SecretSpec } from '@strongroom/sdk-plugin/host';
import { createFaultyStore } from '@strongroom/sdk-plugin/host';
import { createInmemPhysical } from '../storage/inmem.js';
import type { Physical, PhysicalOp } from '../storage/physical.js';
import { createManualClock, type ManualClock } from '@strongroom/sdk-plugin/host';
import { createExpirationManager, defaultExpirationOptions, type ExpirationDeps, type ExpirationManager, type Revoker, type TokenLease } from './expiration-manager.js';
import { decodeEntry, DUE_INDEX_PREFIX, dueIndexFolder, dueIndexKey, leaseBodyKey, LEASE_BODY_PREFIX, type LeaseEntry } from './lease-entry.js';

type Failure = StrongroomError | 'hang';

function createFakeRevoker() {
  const revoked: string[] = [];
  const attempts = new Map<string, number>();
  const failByMount = new Map<string, Failure>();
  const renewCalls: { leaseId: string; increment: number }[] = [];
  let renewTtl = 0;
  const revoker: Revoker = {
    async revokeSecret(lease: LeaseEntry) {
      attempts.set(lease.leaseId, (attempts.get(lease.leaseId) ?? 0) + 1);
      const failure = failByMount.get(lease.mountUuid);
      if (failure === 'hang') return new Promise<void>(() => undefined);
      if (failure) throw failure;
      revoked.push(lease.leaseId);
    },
    async renewSecret(lease, increment) {
      renewCalls.push({ leaseId: lease.leaseId, increment });
      return { ttl: renewTtl };
    },
  };
  return {
    revoker,
    revoked,
    attempts,
    failByMount,
    renewCalls,
    setRenewTtl: (t: number) => {
      renewTtl = t;
    },
  };
}

function createLogSink() {
  const lines: { level: string; msg: string; meta?: Record<string, unknown> }[] = [];
  const at = (level: string) => (msg: string, meta?: Record<string, unknown>) => void lines.push({ level, msg, ...(meta ? { meta } : {}) });
  return { lines, logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } };
}

const secret = (over: Partial<SecretSpec> = {}): SecretSpec => ({
  type: 'creds',
  ttl: 60,
  maxTtl: 0,
  renewable: true,
  internalData: { username: 'v-user-1' },
  ...over,
});

interface Harness {
  store: Physical;
  clock: ManualClock;
  fake: ReturnType<typeof createFakeRevoker>;
  logs: ReturnType<typeof createLogSink>;
  liveTokens: Set<string>;
  mgr: ExpirationManager;
  restart(): ExpirationManager;
}

function setup(over: Partial<ExpirationDeps> = {}, store: Physical = createInmemPhysical()): Harness {
  const clock = createManualClock();
  const fake = createFakeRevoker();
  const logs = createLogSink();
  const liveTokens = new Set<string>(['tok1', 'tok2']);
  const make = (): ExpirationManager =>
    createExpirationManager({
      store,
      revoker: fake.revoker,
      logger: logs.logger,
      clock,
      mountTtls: (uuid) => (uuid === 'small' ? { defaultTtl: 30, maxTtl: 100 } : { defaultTtl: 3600, maxTtl: 86_400 }),
      tokenExists: async (tk) => liveTokens.has(tk),
      options: { random: () => 0.5 },
      ...over,
    });
  const h: Harness = {
    store,
    clock,
    fake,
    logs,
    liveTokens,
    mgr: make(),
    restart() {
      h.mgr.stop();
      h.mgr = make();
      return h.mgr;
    },
  };
  return h;
}

const db = { mountPath: 'database/', mountUuid: 'db-uuid', namespaceId: '', requestPath: 'creds/readonly', tokenKey: 'tok1' };

async function readEntry(store: Physical, leaseId: string): Promise<LeaseEntry | null> {
  const v = await store.get(leaseBodyKey(leaseId));
  return v === null ? null : decodeEntry(v);
}

async function keysUnder(store: Physical, prefix: string): Promise<string[]> {
  const out: string[] = [];
  for await (const k of store.scanKeys(prefix)) out.push(k);
  return out;
}

/** A store that counts reads of lease bodies (gets and scans under the body prefix). */
function bodyReadCounter(inner: Physical): { store: Physical; bodyReads: () => number } {
  let reads = 0;
  const store = Object.create(inner) as Physical;
  store.get = (key) => {
    if (key.startsWith(LEASE_BODY_PREFIX)) reads++;
    return inner.get(key);
  };
  store.scan = (prefix) => {
    if (LEASE_BODY_PREFIX.startsWith(prefix) || prefix.startsWith(LEASE_BODY_PREFIX)) reads++;
    return inner.scan(prefix);
  };
  return { store, bodyReads: () => reads };
}

async function countKeys(store: Physical, prefix: string): Promise<number> {
  let n = 0;
  for await (const _ of store.scan(prefix)) n++;
  return n;
}

/** Advances the clock then waits until revocations settle. */
async function advance(h: Harness, ms: number): Promise<void> {
  h.clock.advance(ms);
  await h.mgr.whenIdle();
}

describe('register', () => {
  it('makes an id under the mount and request path and stores the lease and the token index', async () => {
    const h = setup();
    const lease = await h.mgr.register({ ...db, secret: secret() });
    expect(lease.leaseId).toMatch(/^database\/creds\/readonly\/[A-Za-z0-9]{24}$/);
    expect(lease.ttl).toBe(60);
    expect(lease.expireTime - lease.issueTime).toBe(60_000);
    const entry = await readEntry(h.store, lease.leaseId);
    expect(entry).toMatchObject({ leaseId: lease.leaseId, mountUuid: 'db-uuid', tokenKey: 'tok1', internalData: { username: 'v-user-1' } });
    expect(await countKeys(h.store, 'sys/expire-token/tok1/')).toBe(1);
  });

  it('suffixes the namespace id inside a namespace', async () => {
    const h = setup();
    const lease = await h.mgr.register({ ...db, namespaceId: 'ns1AB', secret: secret() });
    expect(lease.leaseId).toMatch(/^database\/creds\/readonly\/[A-Za-z0-9]{24}\.ns1AB$/);
    expect(await h.mgr.lookup(lease.leaseId)).toMatchObject({ id: lease.leaseId });
  });

  it('caps the TTL by the mount max and by the role max', async () => {
    const h = setup();
    const overMount = await h.mgr.register({ ...db, mountUuid: 'small', secret: secret({ ttl: 500 }) });
    expect(overMount.ttl).toBe(100);
    expect(overMount.warnings.join()).toMatch(/capped/);
    const overRole = await h.mgr.register({ ...db, secret: secret({ ttl: 500, maxTtl: 50 }) });
    expect(overRole.ttl).toBe(50);
    const byDefault = await h.mgr.register({ ...db, mountUuid: 'small', secret: secret({ ttl: 0 }) });
    expect(byDefault.ttl).toBe(30);
    expect(byDefault.warnings).toEqual([]);
  });

  it('revokes the secret at once when the lease cannot be stored', async () => {
    const store = createFaultyStore(createInmemPhysical());
    const h = setup({}, store);
    store.faults.failNext(1, 'batch');
    await expect(h.mgr.register({ ...db, secret: secret() })).rejects.toMatchObject({ code: 'internal' });
    expect(h.fake.revoked).toHaveLength(1);
    expect(h.mgr.stats().leases).toBe(0);
    expect(h.clock.armedTimers()).toBe(0);
  });

  it('refuses bad input naming the field', async () => {
    const h = setup();
    await expect(h.mgr.register({ ...db, mountPath: 'database', secret: secret() })).rejects.toThrow(/mountPath/);
    await expect(h.mgr.register({ ...db, tokenKey: 'a/b', secret: secret() })).rejects.toThrow(/tokenKey/);
  });
});

describe('expiry', () => {
  it('revokes each lease when it falls due, in expiry order, and not before', async () => {
    const h = setup({ options: { maxInFlight: 1, maxInFlightPerMount: 1, random: () => 0.5 } });
    const a = await h.mgr.register({ ...db, secret: secret({ ttl: 30 }) });
    const b = await h.mgr.register({ ...db, secret: secret({ ttl: 10 }) });
    const c = await h.mgr.register({ ...db, secret: secret({ ttl: 20 }) });
    await advance(h, 9_999);
    expect(h.fake.revoked).toEqual([]);
    await advance(h, 1);
    expect(h.fake.revoked).toEqual([b.leaseId]);
    await advance(h, 25_000);
    expect(h.fake.revoked).toEqual([b.leaseId, c.leaseId, a.leaseId]);
    expect(await readEntry(h.store, a.leaseId)).toBeNull();
    expect(await countKeys(h.store, 'sys/expire-token/')).toBe(0);
  });

  // The count proves one timer serves many leases; the 1 M figure is the bench's (leases-1m).
  it('expires 10k leases from one armed timer', async () => {
    const h = setup();
    const n = 10_000;
    for (let i = 0; i < n; i++) {
      await h.mgr.register({ ...db, tokenKey: '', secret: secret({ ttl: 1 + (i % 997) }) });
    }
    expect(h.mgr.stats().leases).toBe(n);
    expect(h.clock.armedTimers()).toBe(1);
    await advance(h, 500_000);
    expect(h.clock.armedTimers()).toBe(1);
    await advance(h, 500_000);
    expect(h.fake.revoked).toHaveLength(n);
    expect(h.mgr.stats()).toMatchObject({ leases: 0, queuedRevocations: 0, inFlightRevocations: 0 });
    expect(h.clock.armedTimers()).toBe(0);
    expect(await countKeys(h.store, 'sys/expire/')).toBe(0);
  }, 120_000);

  it('waits past the 24.8-day setTimeout ceiling without firing early', async () => {
    const h = setup({ mountTtls: () => ({ defaultTtl: 0, maxTtl: 40 * 86_400 }) });
    await h.mgr.register({ ...db, secret: secret({ ttl: 30 * 86_400 }) });
    await advance(h, 25 * 86_400_000);
    expect(h.fake.revoked).toHaveLength(0);
    await advance(h, 5 * 86_400_000);
    expect(h.fake.revoked).toHaveLength(1);
  });
});

describe('failed revocations', () => {
  it('retries with exponential backoff, then keeps the lease as irrevocable', async () => {
    const h = setup();
    h.fake.failByMount.set('db-uuid', new StrongroomError('plugin_failed', 'connection refused'));
    const lease = await h.mgr.register({ ...db, secret: secret({ ttl: 10 }) });
    await advance(h, 10_000);
    expect(h.fake.attempts.get(lease.leaseId)).toBe(1);
    expect((await readEntry(h.store, lease.leaseId))?.revokeAttempts).toBe(1);
    // random 0.5 means no jitter: 10 s, 20 s, 40 s, 80 s, 160 s.
    await advance(h, 9_999);
    expect(h.fake.attempts.get(lease.leaseId)).toBe(1);
    await advance(h, 1);
    expect(h.fake.attempts.get(lease.leaseId)).toBe(2);
    await advance(h, 20_000);
    await advance(h, 40_000);
    await advance(h, 80_000);
    expect(h.mgr.countIrrevocable({ namespaceId: '', includeChildNamespaces: false }).leaseCount).toBe(0);
    await advance(h, 160_000);
    expect(h.fake.attempts.get(lease.leaseId)).toBe(6);
    const entry = await readEntry(h.store, lease.leaseId);
    expect(entry?.irrevocableReason).toBe('connection refused');
    expect(h.mgr.countIrrevocable({ namespaceId: '', includeChildNamespaces: false })).toEqual({ leaseCount: 1, counts: { 'db-uuid': 1 } });
    expect(h.logs.lines.some((l) => l.level === 'error' && l.msg === 'lease is irrevocable')).toBe(true);

    // Kept: retried daily, and removed once the backend recovers.
    await advance(h, 3_600_000);
    expect(h.fake.attempts.get(lease.leaseId)).toBe(6);
    h.fake.failByMount.delete('db-uuid');
    await advance(h, 86_400_000);
    expect(h.fake.revoked).toEqual([lease.leaseId]);
    expect(h.mgr.countIrrevocable({ namespaceId: '', includeChildNamespaces: false }).leaseCount).toBe(0);
  });

  it('retries a revocation the backend refused as a bad request (a DROP ROLE blocked by dependent objects may clear up)', async () => {
    const h = setup();
    h.fake.failByMount.set('db-uuid', badRequest('role "v-app" cannot be dropped because some objects depend on it'));
    const lease = await h.mgr.register({ ...db, secret: secret({ ttl: 10 }) });
    await advance(h, 10_000);
    expect(h.fake.attempts.get(lease.leaseId)).toBe(1);
    expect(h.mgr.countIrrevocable({ namespaceId: '', includeChildNamespaces: false }).leaseCount).toBe(0);
    h.fake.failByMount.delete('db-uuid');
    await advance(h, 10_000);
    expect(h.fake.revoked).toEqual([lease.leaseId]);
  });

  it('marks a lease irrevocable at once on an unrecoverable error', async () => {
    const h = setup();
    h.fake.failByMount.set('db-uuid', unrecoverable('role was deleted'));
    const lease = await h.mgr.register({ ...db, secret: secret({ ttl: 10 }) });
    await advance(h, 10_000);
    expect(h.fake.attempts.get(lease.leaseId)).toBe(1);
    const list = h.mgr.irrevocable({ namespaceId: '', includeChildNamespaces: false });
    expect(list.leases).toEqual([
      expect.objectContaining({ lease_id: lease.leaseId, mount_id: 'db-uuid', mount_path: 'database/', error: 'role was deleted' }),
    ]);
    await expect(h.mgr.renew(lease.leaseId, 0)).rejects.toThrow(/irrevocable/);
  });

  it('lists irrevocable leases per mount and namespace, capped at 10000 with a warning', async () => {
    const h = setup({ isDescendantNamespace: (a, c) => a === '' && c === 'nsKid' });
    h.fake.failByMount.set('db-uuid', unrecoverable('gone'));
    h.fake.failByMount.set('other-uuid', unrecoverable('gone'));
    h.fake.failByMount.set('kid-uuid', unrecoverable('gone'));
    for (let i = 0; i < 10_001; i++) await h.mgr.register({ ...db, tokenKey: '', secret: secret({ ttl: 5 }) });
    await h.mgr.register({ ...db, mountPath: 'other/', mountUuid: 'other-uuid', secret: secret({ ttl: 5 }) });
    await h.mgr.register({ ...db, mountUuid: 'kid-uuid', namespaceId: 'nsKid', secret: secret({ ttl: 5 }) });
    await advance(h, 5_000);

    const root = { namespaceId: '', includeChildNamespaces: false };
    expect(h.mgr.countIrrevocable(root)).toEqual({ leaseCount: 10_002, counts: { 'db-uuid': 10_001, 'other-uuid': 1 } });
    expect(h.mgr.countIrrevocable({ namespaceId: '', includeChildNamespaces: true }).counts['kid-uuid']).toBe(1);
    expect(h.mgr.countIrrevocable({ namespaceId: 'nsKid', includeChildNamespaces: false }).leaseCount).toBe(1);

    const capped = h.mgr.irrevocable(root);
    expect(capped.leaseCount).toBe(10_002);
    expect(capped.leases).toHaveLength(10_000);
    expect(capped.warnings.join()).toMatch(/limit=none/);
    const all = h.mgr.irrevocable({ ...root, limit: 'none' });
    expect(all.leases).toHaveLength(10_002);
    expect(all.warnings).toEqual([]);
  }, 60_000);

  it('does not let a hanging mount starve another mount', async () => {
    const h = setup();
    h.fake.failByMount.set('stuck-uuid', 'hang');
    for (let i = 0; i < 100; i++) await h.mgr.register({ ...db, mountPath: 'stuck/', mountUuid: 'stuck-uuid', secret: secret({ ttl: 5 }) });
    const good: string[] = [];
    for (let i = 0; i < 5; i++) good.push((await h.mgr.register({ ...db, secret: secret({ ttl: 6 }) })).leaseId);
    h.clock.advance(6_000);
    for (let i = 0; i < 50 && h.fake.revoked.length < 5; i++) await new Promise((r) => setImmediate(r));
    expect(h.fake.revoked.sort()).toEqual(good.sort());
    expect(h.mgr.stats().inFlightRevocations).toBe(defaultExpirationOptions.maxInFlightPerMount);
  });
});

describe('revoke', () => {
  it('revokes at once with sync and reports the backend error', async () => {
    const h = setup();
    const lease = await h.mgr.register({ ...db, secret: secret() });
    await h.mgr.revoke(lease.leaseId, { sync: true });
    expect(h.fake.revoked).toEqual([lease.leaseId]);
    await expect(h.mgr.lookup(lease.leaseId)).rejects.toMatchObject({ code: 'bad_request' });

    const kept = await h.mgr.register({ ...db, secret: secret() });
    h.fake.failByMount.set('db-uuid', new StrongroomError('plugin_failed', 'database down'));
    await expect(h.mgr.revoke(kept.leaseId, { sync: true })).rejects.toThrow('database down');
    expect(await readEntry(h.store, kept.leaseId)).not.toBeNull();
  });

  it('queues without sync, durably: the revocation survives a restart', async () => {
    const h = setup();
    const lease = await h.mgr.register({ ...db, secret: secret({ ttl: 3600 }) });
    await h.mgr.revoke(lease.leaseId);
    expect(h.fake.revoked).toEqual([]);
    expect((await h.mgr.lookup(lease.leaseId)).ttl).toBe(0);
    const mgr = h.restart();
    await mgr.restore();
    await advance(h, 0);
    expect(h.fake.revoked).toEqual([lease.leaseId]);
  });

  it('revokes by prefix on whole path segments, sync or queued, and an exact lease id', async () => {
    const h = setup();
    const a1 = await h.mgr.register({ ...db, requestPath: 'creds/a', secret: secret() });
    const a2 = await h.mgr.register({ ...db, requestPath: 'creds/a', secret: secret() });
    const ab = await h.mgr.register({ ...db, requestPath: 'creds/ab', secret: secret() });
    const other = await h.mgr.register({ ...db, mountPath: 'other/', mountUuid: 'o', secret: secret() });
    expect(await h.mgr.revokePrefix('', 'database/creds/a', { sync: true })).toBe(2);
    expect(h.fake.revoked.sort()).toEqual([a1.leaseId, a2.leaseId].sort());
    expect(await h.mgr.revokePrefix('', ab.leaseId)).toBe(1);
    expect(h.fake.revoked).toHaveLength(2);
    await advance(h, 0);
    expect(h.fake.revoked).toContain(ab.leaseId);
    expect(await readEntry(h.store, other.leaseId)).not.toBeNull();
    await expect(h.mgr.revokePrefix('', '')).rejects.toThrow(/prefix/);
  });

  it('does not reach into another namespace by prefix', async () => {
    const h = setup();
    const rootLease = await h.mgr.register({ ...db, secret: secret() });
    const nsLease = await h.mgr.register({ ...db, namespaceId: 'nsA', secret: secret() });
    expect(await h.mgr.revokePrefix('nsA', 'database/', { sync: true })).toBe(1);
    expect(h.fake.revoked).toEqual([nsLease.leaseId]);
    expect(await readEntry(h.store, rootLease.leaseId)).not.toBeNull();
    await expect(h.mgr.revokePrefix('nsA/../root', 'database/', { sync: true })).rejects.toThrow(/namespace/);
    await expect(h.mgr.listPrefix('root/database', '')).rejects.toThrow(/namespace/);
  });

  it('revoke-force ignores backend errors and removes the entries; a plain prefix revoke does not', async () => {
    const h = setup();
    h.fake.failByMount.set('db-uuid', new StrongroomError('plugin_failed', 'database down'));
    const leases = [await h.mgr.register({ ...db, secret: secret() }), await h.mgr.register({ ...db, secret: secret() })];
    await expect(h.mgr.revokePrefix('', 'database/', { sync: true })).rejects.toThrow(/failed to revoke 2 of 2/);
    expect(await countKeys(h.store, 'sys/expire/id/')).toBe(2);
    expect(await countKeys(h.store, DUE_INDEX_PREFIX)).toBe(2);
    expect(await h.mgr.revokePrefix('', 'database/', { force: true })).toBe(2);
    for (const l of leases) expect(h.fake.attempts.get(l.leaseId)).toBe(2);
    expect(await countKeys(h.store, 'sys/expire/')).toBe(0);
    expect(await countKeys(h.store, 'sys/expire-token/')).toBe(0);
    expect(h.mgr.stats().leases).toBe(0);
  });

  it('revoke-force removes a corrupt entry', async () => {
    const h = setup();
    await h.store.put('sys/expire/id/root/database/creds/x/broken', new TextEncoder().encode('{not json'));
    expect(await h.mgr.revokePrefix('', 'database/creds/x', { force: true })).toBe(1);
    expect(await countKeys(h.store, 'sys/expire/')).toBe(0);
  });

  it('revokes every lease of a token, and only those', async () => {
    const h = setup();
    const mine = [await h.mgr.register({ ...db, secret: secret() }), await h.mgr.register({ ...db, requestPath: 'creds/x', secret: secret() })];
    const theirs = await h.mgr.register({ ...db, tokenKey: 'tok2', secret: secret() });
    expect(await h.mgr.revokeByToken('tok1')).toBe(2);
    await advance(h, 0);
    expect(h.fake.revoked.sort()).toEqual(mine.map((l) => l.leaseId).sort());
    expect(await countKeys(h.store, 'sys/expire-token/tok1/')).toBe(0);
    expect(await readEntry(h.store, theirs.leaseId)).not.toBeNull();
    expect(await h.mgr.revokeByToken('tok2', { sync: true })).toBe(1);
    expect(h.fake.revoked).toContain(theirs.leaseId);
  });
});

describe('tidy', () => {
  it('removes the leases whose token is gone and their index entries', async () => {
    const h = setup();
    const live = await h.mgr.register({ ...db, secret: secret() });
    const dead = await h.mgr.register({ ...db, tokenKey: 'tokDead', secret: secret() });
    const none = await h.mgr.register({ ...db, tokenKey: '', secret: secret() });
    const result = await h.mgr.tidy();
    expect(result).toEqual({ scanned: 3, revoked: 2, indexEntriesRemoved: 0, dueKeysRepaired: 0 });
    expect(h.fake.revoked.sort()).toEqual([dead.leaseId, none.leaseId].sort());
    expect(await readEntry(h.store, live.leaseId)).not.toBeNull();
    expect(await countKeys(h.store, 'sys/expire-token/tokDead/')).toBe(0);
  });

  it('drops index entries that point at no lease', async () => {
    const h = setup();
    await h.store.put('sys/expire-token/tok1/abc', new TextEncoder().encode('database/creds/gone/xyz'));
    expect((await h.mgr.tidy()).indexEntriesRemoved).toBe(1);
    expect(await countKeys(h.store, 'sys/expire-token/')).toBe(0);
  });
});

describe('events', () => {
  it('counts only a lease the timer revoked at its natural end as expired', async () => {
    const seen: Array<[string, boolean]> = [];
    const h = setup({ events: { revoked: (mountPath, expired) => void seen.push([mountPath, expired]) } });
    const sync = await h.mgr.register({ ...db, secret: secret({ ttl: 100 }) });
    const queued = await h.mgr.register({ ...db, secret: secret({ ttl: 100 }) });
    await h.mgr.register({ ...db, secret: secret({ ttl: 100 }) });
    await h.mgr.revoke(sync.leaseId, { sync: true });
    await h.mgr.revoke(queued.leaseId);
    await advance(h, 0);
    expect(seen).toEqual([
      ['database/', false],
      ['database/', false],
    ]);
    await advance(h, 100_000);
    expect(seen[2]).toEqual(['database/', true]);
  });
});

describe('tidy of the due index', () => {
  it('gives a body without its index key one and removes keys that match no body', async () => {
    const h = setup();
    const lease = await h.mgr.register({ ...db, secret: secret({ ttl: 100 }) });
    const [real] = await keysUnder(h.store, dueIndexFolder(lease.leaseId));
    await h.store.delete(real!);
    const orphan = `${DUE_INDEX_PREFIX}database/creds/readonly/OrphanOrphanOrphanOrphan/${h.clock.now()},0,9,db-uuid`;
    await h.store.put(orphan, new Uint8Array(0));
    expect(await h.mgr.tidy()).toMatchObject({ dueKeysRepaired: 2 });
    expect(await keysUnder(h.store, DUE_INDEX_PREFIX)).toEqual([real]);
  });
});

describe('renew', () => {
  it('extends the lease, passes the increment, and moves the expiry', async () => {
    const h = setup();
    const lease = await h.mgr.register({ ...db, secret: secret({ ttl: 60 }) });
    await advance(h, 50_000);
    const renewed = await h.mgr.renew(lease.leaseId, 120);
    expect(renewed).toMatchObject({ leaseId: lease.leaseId, renewable: true, leaseDuration: 120 });
    expect(h.fake.renewCalls).toEqual([{ leaseId: lease.leaseId, increment: 120 }]);
    await advance(h, 60_000);
    expect(h.fake.revoked).toEqual([]);
    const look = await h.mgr.lookup(lease.leaseId);
    expect(look.ttl).toBe(60);
    expect(look.last_renewal).not.toBeNull();
    await advance(h, 60_000);
    expect(h.fake.revoked).toEqual([lease.leaseId]);
  });

  it('caps the renewal by the max TTL counted from issue time', async () => {
    const h = setup();
    const lease = await h.mgr.register({ ...db, mountUuid: 'small', secret: secret({ ttl: 60 }) });
    await advance(h, 50_000);
    const renewed = await h.mgr.renew(lease.leaseId, 1000);
    expect(renewed.leaseDuration).toBe(50);
    expect(renewed.warnings.join()).toMatch(/capped/);
  });

  it('refuses non-renewable leases, token leases, expired and unknown leases', async () => {
    const h = setup();
    const fixed = await h.mgr.register({ ...db, secret: secret({ renewable: false }) });
    await expect(h.mgr.renew(fixed.leaseId, 0)).rejects.toThrow(/not renewable/);
    await h.mgr.putTokenLease(tokenLease(), []);
    await expect(h.mgr.renew(`auth/token/create/${TOKEN_KEY}`, 0)).rejects.toThrow(/auth\/token\/renew/);
    await expect(h.mgr.renew('database/creds/x/nope', 0)).rejects.toMatchObject({ status: 400 });
    await expect(h.mgr.renew(fixed.leaseId, -1)).rejects.toThrow(/increment/);
    const queued = await h.mgr.register({ ...db, secret: secret() });
    await h.mgr.revoke(queued.leaseId);
    await expect(h.mgr.renew(queued.leaseId, 0)).rejects.toThrow(/expired/);
    expect(h.fake.renewCalls).toEqual([]);
  });
});

describe('lookup and list', () => {
  it('returns the lease fields and lists one level under a prefix', async () => {
    const h = setup();
    const lease = await h.mgr.register({ ...db, secret: secret({ ttl: 60, renewable: false }) });
    await h.mgr.register({ ...db, requestPath: 'creds/other', secret: secret() });
    await advance(h, 10_000);
    const look = await h.mgr.lookup(lease.leaseId);
    expect(look).toEqual({
      id: lease.leaseId,
      issue_time: new Date(lease.issueTime).toISOString(),
      expire_time: new Date(lease.expireTime).toISOString(),
      last_renewal: null,
      renewable: false,
      ttl: 50,
    });
    expect(await h.mgr.listPrefix('', 'database/creds')).toEqual(['other/', 'readonly/']);
    expect(await h.mgr.listPrefix('', 'database/creds/readonly/')).toEqual([lease.leaseId.split('/').pop()]);
    expect(await h.mgr.listPrefix('', '')).toEqual(['database/']);
    await expect(h.mgr.lookup('')).rejects.toThrow(/lease_id/);
  });
});

describe('restore', () => {
  it('restores after a restart and promptly revokes leases that expired while down', async () => {
    const h = setup();
    const short = await h.mgr.register({ ...db, secret: secret({ ttl: 100 }) });
    const long = await h.mgr.register({ ...db, secret: secret({ ttl: 10_000 }) });
    h.mgr.stop();
    h.clock.advance(200_000);
    expect(h.fake.revoked).toEqual([]);
    const mgr = h.restart();
    expect(await mgr.restore()).toMatchObject({ loaded: 2, corrupt: 0, failed: false });
    await advance(h, 0);
    expect(h.fake.revoked).toEqual([short.leaseId]);
    expect((await mgr.lookup(long.leaseId)).ttl).toBe(9_800);
    await advance(h, 9_800_000);
    expect(h.fake.revoked).toEqual([short.leaseId, long.leaseId]);
  });

  it('logs and skips a malformed index key without aborting, and never logs a corrupt body', async () => {
    const h = setup();
    for (let i = 0; i < 5; i++) await h.mgr.register({ ...db, secret: secret() });
    await h.store.put(`${DUE_INDEX_PREFIX}database/creds/readonly/AAAA/not-an-index-key`, new Uint8Array(0));
    // A corrupt body under a valid index key: restored (restore reads no body), refused only when acted on.
    const corruptId = 'database/creds/readonly/BBBB';
    await h.store.put(leaseBodyKey(corruptId), new TextEncoder().encode('{"secret":"hunter2"'));
    await h.store.put(dueIndexKey({ leaseId: corruptId, expireTime: h.clock.now() + 1_000, irrevocableReason: null, mountPath: 'database/', mountUuid: 'db-uuid' }), new Uint8Array(0));
    const mgr = h.restart();
    expect(await mgr.restore()).toMatchObject({ loaded: 6, corrupt: 1, failed: false });
    const warning = h.logs.lines.find((l) => l.msg.includes('malformed'));
    expect(warning?.meta).toEqual({ key: `${DUE_INDEX_PREFIX}database/creds/readonly/AAAA/not-an-index-key` });
    await advance(h, 1_000);
    expect(mgr.irrevocable({ namespaceId: '', includeChildNamespaces: false }).leases.map((l) => l.lease_id)).toEqual([corruptId]);
    expect(JSON.stringify(h.logs.lines)).not.toContain('hunter2');
    expect(mgr.stats().leases).toBe(6);
  });

  it('still reads a lease body an earlier version stored with a restore header line', async () => {
    const h = setup();
    const current = await h.mgr.register({ ...db, secret: secret({ ttl: 100 }) });
    const stored = new TextDecoder().decode((await h.store.get(leaseBodyKey(current.leaseId)))!);
    expect(stored.startsWith('{')).toBe(true);
    const legacyId = 'database/creds/readonly/LegacyLegacyLegacyLega';
    const legacy: LeaseEntry = { ...(await readEntry(h.store, current.leaseId))!, leaseId: legacyId, expireTime: current.expireTime + 50_000 };
    const header = JSON.stringify([legacy.expireTime, 0, 'db-uuid', 'database/', '']);
    await h.store.put(leaseBodyKey(legacyId), new TextEncoder().encode(`${header}\n${JSON.stringify(legacy)}`));
    await h.store.put(dueIndexKey(legacy), new Uint8Array(0));
    const mgr = h.restart();
    expect(await mgr.restore()).toMatchObject({ loaded: 2, corrupt: 0 });
    expect((await mgr.lookup(legacyId)).ttl).toBe(150);
    await advance(h, 100_000);
    expect(h.fake.revoked).toEqual([current.leaseId]);
    await advance(h, 50_000);
    expect(h.fake.revoked).toEqual([current.leaseId, legacyId]);
  });

  it('keeps irrevocable leases irrevocable across restarts', async () => {
    const h = setup();
    h.fake.failByMount.set('db-uuid', unrecoverable('gone'));
    const lease = await h.mgr.register({ ...db, secret: secret({ ttl: 1 }) });
    await advance(h, 1_000);
    for (let i = 0; i < 2; i++) {
      const mgr = h.restart();
      await mgr.restore();
      expect(mgr.irrevocable({ namespaceId: '', includeChildNamespaces: false }).leases).toEqual([
        expect.objectContaining({ lease_id: lease.leaseId, mount_path: 'database/', error: expect.stringContaining('gone') }),
      ]);
    }
  });

  it('restores from the due index alone: no lease body is read, and a new store runs no migration', async () => {
    const counted = bodyReadCounter(createInmemPhysical());
    const h = setup({}, counted.store);
    const short = await h.mgr.register({ ...db, secret: secret({ ttl: 100 }) });
    const long = await h.mgr.register({ ...db, mountUuid: 'db-ns1', namespaceId: 'ns1', secret: secret({ ttl: 10_000 }) });
    const before = counted.bodyReads();
    const mgr = h.restart();
    expect(await mgr.restore()).toMatchObject({ loaded: 2, corrupt: 0, failed: false });
    expect(counted.bodyReads()).toBe(before);
    expect(mgr.countByMount()).toEqual(
      expect.arrayContaining([
        { mountPath: 'database/', namespaceId: '', count: 1 },
        { mountPath: 'database/', namespaceId: 'ns1', count: 1 },
      ]),
    );
    await advance(h, 99_000);
    expect(h.fake.revoked).toEqual([]);
    await advance(h, 1_000);
    expect(h.fake.revoked).toEqual([short.leaseId]);
    await advance(h, 9_900_000);
    expect(h.fake.revoked).toEqual([short.leaseId, long.leaseId]);
    expect(await keysUnder(h.store, DUE_INDEX_PREFIX)).toEqual([]);
  });

  it('gives a store written before the due index its index through tidy; the next restore loads its leases', async () => {
    const h = setup();
    const leases = [await h.mgr.register({ ...db, secret: secret({ ttl: 100 }) }), await h.mgr.register({ ...db, secret: secret({ ttl: 200 }) })];
    // The store as an older version left it: bodies, no index keys.
    for (const k of await keysUnder(h.store, DUE_INDEX_PREFIX)) await h.store.delete(k);
    expect(await h.restart().restore()).toMatchObject({ loaded: 0 });
    expect(await h.mgr.tidy()).toMatchObject({ dueKeysRepaired: 2 });
    const entries = await Promise.all(leases.map((l) => readEntry(h.store, l.leaseId)));
    expect(await keysUnder(h.store, DUE_INDEX_PREFIX)).toEqual(entries.map((e) => dueIndexKey(e!)).sort());
    expect(await h.restart().restore()).toMatchObject({ loaded: 2 });
  });

  it('never revokes early on a stale or edited index key, and repairs it', async () => {
    const h = setup();
    const lease = await h.mgr.register({ ...db, secret: secret({ ttl: 100 }) });
    await h.restart().restore();
    const entry = (await readEntry(h.store, lease.leaseId))!;
    const [real] = await keysUnder(h.store, dueIndexFolder(lease.leaseId));
    expect(real).toBe(dueIndexKey(entry));
    // An index key that says the lease is due in 10 s, in place of the real one.
    await h.store.delete(real!);
    await h.store.put(dueIndexKey({ ...entry, expireTime: entry.expireTime - 90_000 }), new Uint8Array(0));
    const mgr = h.restart();
    expect(await mgr.restore()).toMatchObject({ loaded: 1 });
    await advance(h, 10_000);
    expect(h.fake.revoked).toEqual([]);
    expect(await keysUnder(h.store, dueIndexFolder(lease.leaseId))).toEqual([real]);
    await advance(h, 90_000);
    expect(h.fake.revoked).toEqual([lease.leaseId]);
  });

  it('moves the due-index key with each change of the lease, in the same write', async () => {
    const h = setup();
    h.fake.setRenewTtl(500);
    const lease = await h.mgr.register({ ...db, secret: secret({ ttl: 100 }) });
    const current = async () => dueIndexKey((await readEntry(h.store, lease.leaseId))!);
    expect(await keysUnder(h.store, DUE_INDEX_PREFIX)).toEqual([await current()]);
    await h.mgr.renew(lease.leaseId, 0);
    expect(await keysUnder(h.store, DUE_INDEX_PREFIX)).toEqual([await current()]);
    expect(await current()).toContain(`/${h.clock.now() + 500_000},0,9,db-uuid`);
    await h.mgr.revoke(lease.leaseId);
    expect(await keysUnder(h.store, DUE_INDEX_PREFIX)).toEqual([await current()]);
    await advance(h, 0);
    expect(h.fake.revoked).toEqual([lease.leaseId]);
    expect(await keysUnder(h.store, DUE_INDEX_PREFIX)).toEqual([]);
  });

  it('holds a lease with a stale index key beside its current one once, and revokes it once, when its body says', async () => {
    const h = setup();
    const lease = await h.mgr.register({ ...db, secret: secret({ ttl: 100 }) });
    const entry = (await readEntry(h.store, lease.leaseId))!;
    // An earlier state's key, due sooner: it sorts first, so restore meets it first.
    await h.store.put(dueIndexKey({ ...entry, expireTime: entry.expireTime - 90_000 }), new Uint8Array(0));
    const mgr = h.restart();
    expect(await mgr.restore()).toMatchObject({ loaded: 1, skipped: 1, corrupt: 0 });
    expect(mgr.stats().leases).toBe(1);
    await advance(h, 10_000);
    expect(h.fake.revoked).toEqual([]);
    expect(await keysUnder(h.store, DUE_INDEX_PREFIX)).toEqual([dueIndexKey(entry)]);
    await advance(h, 90_000);
    expect(h.fake.revoked).toEqual([lease.leaseId]);
  });

  it('serves leases during restore and does not resurrect one revoked meanwhile', async () => {
    const h = setup();
    const leases = [];
    for (let i = 0; i < 30; i++) leases.push(await h.mgr.register({ ...db, secret: secret({ ttl: 100 }) }));
    const mgr = h.restart();
    const restoring = mgr.restore();
    const target = leases[29]!;
    await mgr.revoke(target.leaseId, { sync: true });
    const fresh = await mgr.register({ ...db, secret: secret({ ttl: 5 }) });
    const result = await restoring;
    // Whether the scan still yields the revoked one depends on the store's snapshot semantics.
    expect(result.loaded + result.skipped).toBeGreaterThanOrEqual(29);
    expect(mgr.stats().leases).toBe(30);
    await advance(h, 5_000);
    expect(h.fake.revoked).toEqual([target.leaseId, fresh.leaseId]);
  });
});

const TOKEN_KEY = 'a'.repeat(64);
const tokenLease = (over: Partial<TokenLease> = {}): TokenLease => ({
  tokenKey: TOKEN_KEY,
  path: 'auth/token/create',
  namespaceId: 'root',
  mountPath: 'auth/token/',
  mountUuid: 'token-uuid',
  issueTime: 0,
  expireTime: Date.UTC(2100, 0, 1),
  lastRenewalTime: null,
  ttl: 60,
  renewable: true,
  ...over,
});

describe('token leases', () => {
  function withTokens() {
    const revokedTokens: string[] = [];
    let failure: Error | null = null;
    const h = setup({
      revokeToken: async (key) => {
        if (failure) throw failure;
        revokedTokens.push(key);
      },
    });
    return { h, revokedTokens, fail: (e: Error | null) => (failure = e) };
  }

  it('stores the quota role a lease is counted under in its body and due-index key, and hands it back at restore', async () => {
    const held: Array<[string, string | undefined]> = [];
    let role: string | undefined = 'web role/é';
    const h = setup({ quotaRole: () => role, events: { held: (id, m) => held.push([id, m.role]) } });
    const login = { path: 'auth/approle/login', mountPath: 'auth/approle/', mountUuid: 'approle-uuid' };
    await h.mgr.putTokenLease(tokenLease(login), []);
    const id = `auth/approle/login/${TOKEN_KEY}`;
    expect(held).toEqual([[id, 'web role/é']]);
    expect((await readEntry(h.store, id))?.quotaRole).toBe('web role/é');
    // The due-index key carries it (base64url, a safe alphabet), so restore reads no body.
    const [key] = await keysUnder(h.store, dueIndexFolder(id));
    expect(key).toBe(dueIndexKey((await readEntry(h.store, id))!));
    expect(key!.split(',')).toHaveLength(5);
    role = undefined;
    const h2 = setup({ events: { held: (i, m) => held.push([i, m.role]) } }, h.store);
    expect(await h2.mgr.restore()).toMatchObject({ loaded: 1 });
    expect(held[1]).toEqual([id, 'web role/é']);
    // A lease with no role keeps the four-field key.
    await h2.mgr.putTokenLease(tokenLease(), []);
    expect((await keysUnder(h.store, dueIndexFolder(`auth/token/create/${TOKEN_KEY}`)))[0]!.split(',')).toHaveLength(4);
  });

  it("writes a new token's lease without looking for stale due-index keys, and a renewal's with", async () => {
    const { h } = withTokens();
    const scan = jest.spyOn(h.store, 'scanKeys');
    const id = `auth/token/create/${TOKEN_KEY}`;
    const t0 = h.clock.now();
    await h.mgr.putTokenLease(tokenLease({ issueTime: t0, expireTime: t0 + 60_000 }), [], true);
    expect(scan).not.toHaveBeenCalled();
    await h.mgr.putTokenLease(tokenLease({ issueTime: t0, expireTime: t0 + 120_000, lastRenewalTime: t0 + 30_000, ttl: 90 }), []);
    expect(scan).toHaveBeenCalledWith(dueIndexFolder(id));
    expect(await keysUnder(h.store, dueIndexFolder(id))).toHaveLength(1);
  });

  it('expires a token through the token store, moves with its renewals, and is listed and looked up as a lease', async () => {
    const { h, revokedTokens } = withTokens();
    const marker: PhysicalOp = { type: 'put', key: 'sys/token/id/marker', value: new Uint8Array([1]) };
    const t0 = h.clock.now();
    await h.mgr.putTokenLease(tokenLease({ issueTime: t0, expireTime: t0 + 60_000 }), [marker]);
    // The token store's own write went in the same batch.
    expect(await h.store.get('sys/token/id/marker')).not.toBeNull();
    const id = `auth/token/create/${TOKEN_KEY}`;
    expect(await h.mgr.listPrefix('', 'auth/token/create/')).toEqual([TOKEN_KEY]);
    expect(await h.mgr.lookup(id)).toMatchObject({ id, ttl: 60, renewable: true });
    await advance(h, 30_000);
    await h.mgr.putTokenLease(tokenLease({ issueTime: t0, expireTime: t0 + 120_000, lastRenewalTime: t0 + 30_000, ttl: 90 }), []);
    expect(await keysUnder(h.store, dueIndexFolder(id))).toHaveLength(1);
    await advance(h, 60_000);
    expect(revokedTokens).toEqual([]);
    await advance(h, 30_000);
    expect(revokedTokens).toEqual([TOKEN_KEY]);
    expect(await keysUnder(h.store, 'sys/expire/')).toEqual([]);
    // Never in the token index: a token's lease is its own, not one it owns.
    expect(await keysUnder(h.store, 'sys/expire-token/')).toEqual([]);
  });

  it('carries the namespace in the id, is dropped with the token, and is revoked at once even unasked to sync', async () => {
    const { h, revokedTokens } = withTokens();
    await h.mgr.putTokenLease(tokenLease({ namespaceId: 'ns1', mountUuid: 'token-ns1' }), []);
    expect(await h.mgr.listPrefix('ns1', 'auth/token/create/')).toEqual([`${TOKEN_KEY}.ns1`]);
    expect(await h.mgr.listPrefix('', 'auth/token/create/')).toEqual([]);
    await h.mgr.dropTokenLease(`auth/token/create/${TOKEN_KEY}.ns1`, []);
    expect(await keysUnder(h.store, 'sys/expire/')).toEqual([]);
    expect(h.mgr.stats().leases).toBe(0);

    await h.mgr.putTokenLease(tokenLease({ path: 'auth/approle/login', mountPath: 'auth/approle/', mountUuid: 'approle-uuid' }), []);
    await h.mgr.revoke(`auth/approle/login/${TOKEN_KEY}`);
    expect(revokedTokens).toEqual([TOKEN_KEY]);
    await expect(h.mgr.putTokenLease(tokenLease({ mountPath: 'auth/approle/' }), [])).rejects.toMatchObject({ status: 400 });
    await expect(h.mgr.putTokenLease(tokenLease({ tokenKey: 'not-a-key' }), [])).rejects.toThrow(/tokenKey/);
  });

  it('retries a failed token revocation with backoff, then keeps it irrevocable and reported', async () => {
    const { h, revokedTokens, fail } = withTokens();
    fail(new StrongroomError('unavailable', 'storage down'));
    await h.mgr.putTokenLease(tokenLease({ issueTime: h.clock.now(), expireTime: h.clock.now() + 1_000 }), []);
    await advance(h, 1_000);
    for (let i = 0; i < defaultExpirationOptions.maxRevokeAttempts; i++) await advance(h, 10_000 * 2 ** i);
    const list = h.mgr.irrevocable({ namespaceId: '', includeChildNamespaces: false });
    expect(list.leases).toEqual([expect.objectContaining({ lease_id: `auth/token/create/${TOKEN_KEY}`, mount_path: 'auth/token/', error: 'storage down' })]);
    fail(null);
    await h.mgr.revokePrefix('', 'auth/token/', { force: true });
    expect(revokedTokens).toEqual([TOKEN_KEY]);
    expect(h.mgr.stats().irrevocable).toBe(0);
  });
});

describe('stop', () => {
  it('drops the timer and memory, and refuses work while sealed', async () => {
    const h = setup();
    await h.mgr.register({ ...db, secret: secret() });
    expect(h.clock.armedTimers()).toBe(1);
    h.mgr.stop();
    expect(h.clock.armedTimers()).toBe(0);
    expect(h.mgr.stats().leases).toBe(0);
    await expect(h.mgr.register({ ...db, secret: secret() })).rejects.toMatchObject({ code: 'unavailable' });
  });
});
