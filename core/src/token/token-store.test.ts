import { randomBytes } from 'node:crypto';
import { StrongroomError } from '@strongroom/sdk-plugin/host';
import type { Physical, PhysicalEntry, PhysicalOp } from '../storage/physical.js';
import { createManualClock } from '@strongroom/sdk-plugin/host';
import { createExpirationManager, type ExpirationManager, type TokenLease } from '../expiration/index.js';
import { createInmemPhysical } from '../storage/inmem.js';
import { createTokenStore, type LoginRenewal, type TokenStore, type TokenStoreDeps } from './token-store.js';
import type { TokenEntry } from './types.js';

type Store = Pick<Physical, 'get' | 'put' | 'delete' | 'list' | 'batch' | 'scan' | 'scanKeys'> & { data: Map<string, Buffer> };

/** A plain in-memory stand-in for the barrier's secure store. */
function memoryStore(): Store {
  const data = new Map<string, Buffer>();
  const under = (prefix: string) => [...data.keys()].filter((k) => k.startsWith(prefix)).sort();
  return {
    data,
    async get(k) {
      const v = data.get(k);
      return v === undefined ? null : Buffer.from(v);
    },
    async put(k, v) {
      data.set(k, Buffer.from(v));
    },
    async delete(k) {
      data.delete(k);
    },
    async list(prefix) {
      const out = new Set<string>();
      for (const k of under(prefix)) {
        const rest = k.slice(prefix.length);
        const i = rest.indexOf('/');
        out.add(i === -1 ? rest : rest.slice(0, i + 1));
      }
      return [...out].sort();
    },
    async batch(ops: PhysicalOp[]) {
      for (const op of ops) {
        if (op.type === 'put') data.set(op.key, Buffer.from(op.value));
        else data.delete(op.key);
      }
    },
    async *scan(prefix): AsyncIterable<PhysicalEntry> {
      for (const key of under(prefix)) {
        const v = data.get(key);
        if (v) yield { key, value: Buffer.from(v) };
      }
    },
    async *scanKeys(prefix): AsyncIterable<string> {
      yield* under(prefix);
    },
  };
}

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

function setup(opts: { defaultTtl?: number; maxTtl?: number; renewLogin?: TokenStoreDeps['renewLogin'] } = {}) {
  const store = memoryStore();
  let t = Date.UTC(2030, 0, 1);
  const clock = { now: () => t, advance: (sec: number) => (t += sec * 1000) };
  const revokedLeases: string[] = [];
  const tokenLeases = new Map<string, TokenLease>();
  /** Token key -> whether its last lease write said it was a new token's. */
  const freshLeases = new Map<string, boolean>();
  const leases = {
    fail: null as null | ((key: string) => boolean),
    async revokeByToken(key: string) {
      if (leases.fail?.(key)) throw new Error('lease backend down');
      revokedLeases.push(key);
    },
    async putTokenLease(lease: TokenLease, ops: readonly PhysicalOp[], fresh = false) {
      await store.batch([...ops]);
      tokenLeases.set(lease.tokenKey, lease);
      freshLeases.set(lease.tokenKey, fresh);
    },
    async dropTokenLease(leaseId: string, ops: readonly PhysicalOp[]) {
      await store.batch([...ops]);
      tokenLeases.delete(leaseId.slice(leaseId.lastIndexOf('/') + 1));
    },
  };
  const hmacKey = randomBytes(32);
  const ts = createTokenStore({
    store,
    hmacKey,
    batchKey: randomBytes(32),
    clock,
    systemDefaultTtl: opts.defaultTtl ?? 3600,
    systemMaxTtl: opts.maxTtl ?? 86400,
    leases,
    ...(opts.renewLogin ? { renewLogin: opts.renewLogin } : {}),
    logger: silent,
  });
  return { ts, store, clock, revokedLeases, leases, tokenLeases, freshLeases };
}

async function rootToken(ts: TokenStore) {
  const r = await ts.createRoot();
  return r.entry;
}

async function expectError(p: Promise<unknown>, status: number, text?: RegExp): Promise<void> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StrongroomError);
  expect((err as StrongroomError).status).toBe(status);
  if (text) expect((err as StrongroomError).message).toMatch(text);
}

describe('token ids and storage', () => {
  it('stores only HMACs: no token id or accessor appears in any key, and no id in any value', async () => {
    const { ts, store } = setup();
    const root = await ts.createRoot('devroot');
    const child = await ts.create(root.entry, { policies: ['a'] });
    const grandchild = await ts.create(child.entry, {});
    const batch = await ts.create(root.entry, { type: 'batch', policies: ['a'] });
    await ts.writeRole('r1', { allowedPolicies: ['x'] });
    const viaRole = await ts.create(child.entry, { roleName: 'r1' });

    const ids = [root.id, child.id, grandchild.id, batch.id, viaRole.id];
    const accessors = [root.entry.accessor, child.entry.accessor, grandchild.entry.accessor, viaRole.entry.accessor];
    expect(store.data.size).toBeGreaterThan(8);
    for (const [key, value] of store.data) {
      const text = value.toString('utf8');
      for (const id of ids) {
        const secretPart = id.split('.')[1] ?? id;
        expect(key).not.toContain(secretPart);
        expect(text).not.toContain(secretPart);
      }
      for (const a of accessors) expect(key).not.toContain(a);
    }
    expect(child.id).toMatch(/^srs\.[A-Za-z0-9]{24}$/);
    expect(root.id).toBe('devroot');
    expect(batch.id.startsWith('srb.')).toBe(true);
    expect(store.data.has(`sys/token/id/${ts.tokenKey(child.id)}`)).toBe(true);
  });

  it('suffixes the namespace id to service ids and accessors inside a namespace', async () => {
    const { ts } = setup();
    const root = await rootToken(ts);
    const t = await ts.create(root, { namespaceId: 'aB3xY' });
    expect(t.id).toMatch(/^srs\.[A-Za-z0-9]{24}\.aB3xY$/);
    expect(t.entry.accessor.endsWith('.aB3xY')).toBe(true);
    expect((await ts.lookup(t.id))?.namespaceId).toBe('aB3xY');
  });

  it('accepts a custom id only from root or sudo, and never twice', async () => {
    const { ts } = setup();
    const root = await rootToken(ts);
    const plain = await ts.create(root, { policies: ['a'] });
    await expectError(ts.create(plain.entry, { id: 'mine' }), 403);
    const sudoMade = await ts.create(plain.entry, { id: 'mine', callerHasSudo: true });
    expect(sudoMade.id).toBe('mine');
    await expectError(ts.create(root, { id: 'mine' }), 400, /duplicate/);
    await expectError(ts.create(root, { id: 'has.dot' }), 400, /^id:/);
  });

  it("tells the lease store a generated id's lease is new (no stale index to look for), a custom id's not", async () => {
    const { ts, freshLeases } = setup();
    const root = await rootToken(ts);
    const made = await ts.create(root, { policies: ['a'], ttl: 600 });
    expect(freshLeases.get(made.entry.key)).toBe(true);
    const chosen = await ts.create(root, { id: 'chosen', ttl: 600 });
    expect(freshLeases.get(chosen.entry.key)).toBe(false);
  });
});

describe('creation rules', () => {
  it('makes child policies a subset of the parent unless the parent is root or the caller has sudo', async () => {
    const { ts } = setup();
    const root = await rootToken(ts);
    const parent = await ts.create(root, { policies: ['A', 'b', 'b'] });
    expect(parent.entry.policies).toEqual(['a', 'b', 'default']);

    expect((await ts.create(parent.entry, { policies: ['a'] })).entry.policies).toEqual(['a', 'default']);
    expect((await ts.create(parent.entry, {})).entry.policies).toEqual(['a', 'b', 'default']);
    expect((await ts.create(parent.entry, { noDefaultPolicy: true })).entry.policies).toEqual(['a', 'b']);
    await expectError(ts.create(parent.entry, { policies: ['a', 'c'] }), 400, /subset of parent/);
    expect((await ts.create(parent.entry, { policies: ['c'], callerHasSudo: true })).entry.policies).toEqual(['c', 'default']);
    await expectError(ts.create(parent.entry, { policies: ['root'], callerHasSudo: true }), 403, /root/);

    const noDefaultParent = await ts.create(root, { policies: ['a'], noDefaultPolicy: true });
    expect((await ts.create(noDefaultParent.entry, { policies: ['a'] })).entry.policies).toEqual(['a']);
    // root swallows everything else, and root children of root are allowed
    expect((await ts.create(root, { policies: ['root', 'x'] })).entry.policies).toEqual(['root']);
  });

  it('needs root or sudo for no_parent, but not for the create-orphan endpoint', async () => {
    const { ts } = setup();
    const root = await rootToken(ts);
    const parent = await ts.create(root, { policies: ['a'] });
    await expectError(ts.create(parent.entry, { noParent: true }), 400, /orphan/); // 400, as Vault answers it
    expect((await ts.create(parent.entry, { noParent: true, callerHasSudo: true })).entry.parent).toBe('');
    const viaEndpoint = await ts.create(parent.entry, { orphanEndpoint: true });
    expect(viaEndpoint.entry.parent).toBe('');
    expect(viaEndpoint.entry.path).toBe('auth/token/create-orphan');
    const child = await ts.create(parent.entry, {});
    expect(child.entry.parent).toBe(parent.entry.key);
    expect(ts.lookupResponse(child.entry).orphan).toBe(false);
  });

  it('caps TTL by system max, explicit max and (for children) the parent remaining TTL', async () => {
    const { ts, clock } = setup({ defaultTtl: 3600, maxTtl: 86400 });
    const root = await rootToken(ts);
    expect((await ts.create(root, { policies: ['a'] })).entry.ttl).toBe(3600);
    const big = await ts.create(root, { policies: ['a'], ttl: 10 * 86400 });
    expect(big.entry.ttl).toBe(86400);
    expect(big.warnings.join()).toMatch(/capped/);
    expect((await ts.create(root, { policies: ['a'], ttl: 7200, explicitMaxTtl: 600 })).entry.ttl).toBe(600);

    const parent = await ts.create(root, { policies: ['a'], ttl: 1000 });
    clock.advance(400);
    const child = await ts.create(parent.entry, { ttl: 5000 });
    expect(child.entry.ttl).toBe(600);
    expect(child.entry.expireTime).toBe(parent.entry.expireTime);
    const orphan = await ts.create(parent.entry, { ttl: 5000, orphanEndpoint: true });
    expect(orphan.entry.ttl).toBe(5000);
  });

  it('gives root children no TTL unless asked, and refuses non-expiring tokens from expiring parents', async () => {
    const { ts } = setup();
    const root = await rootToken(ts);
    const rootChild = await ts.create(root, {});
    expect(rootChild.entry.policies).toEqual(['root']);
    expect(rootChild.entry.expireTime).toBe(0);
    expect(rootChild.entry.renewable).toBe(false);
    const expiringRoot = await ts.create(root, { ttl: 100 });
    await expectError(ts.create(expiringRoot.entry, {}), 400, /non-expiring/);
  });

  it('creates periodic tokens only with root or sudo, with TTL = period', async () => {
    const { ts } = setup();
    const root = await rootToken(ts);
    const p = await ts.create(root, { policies: ['a'], period: 600, ttl: 50 });
    expect(p.entry.ttl).toBe(600);
    expect(p.entry.period).toBe(600);
    await expectError(ts.create(p.entry, { period: 60 }), 403, /periodic/);
    const capped = await ts.create(root, { policies: ['a'], period: 600, explicitMaxTtl: 100 });
    expect(capped.entry.ttl).toBe(100);
  });

  it('refuses negative num_uses and children of limited-use tokens', async () => {
    const { ts } = setup();
    const root = await rootToken(ts);
    await expectError(ts.create(root, { numUses: -1 }), 400, /num_uses/);
    const limited = await ts.create(root, { policies: ['a'], numUses: 3 });
    await expectError(ts.create(limited.entry, {}), 400, /limited use count/);
  });

  it('renders display names as Vault does', async () => {
    const { ts } = setup();
    const root = await rootToken(ts);
    expect((await ts.create(root, { displayName: 'my app!' })).entry.displayName).toBe('token-my-app');
    expect((await ts.create(root, {})).entry.displayName).toBe('token');
    expect(root.displayName).toBe('root');
  });
});

describe('use counts', () => {
  it('decrements num_uses and invalidates the token on its last use until revoked after the request', async () => {
    const { ts, revokedLeases } = setup();
    const root = await rootToken(ts);
    const t = await ts.create(root, { policies: ['a'], numUses: 2 });
    const first = await ts.useToken(t.entry);
    expect(first).toMatchObject({ lastUse: false, entry: { numUses: 1 } });
    expect((await ts.lookup(t.id))?.numUses).toBe(1);
    const second = await ts.useToken((await ts.lookup(t.id)) as TokenEntry);
    expect(second?.lastUse).toBe(true);
    expect(await ts.lookup(t.id)).toBeNull();
    expect(await ts.useToken(t.entry)).toBeNull();
    await ts.revokeEntry(second?.entry as TokenEntry);
    expect(revokedLeases).toContain(t.entry.key);
    expect(await ts.lookupByAccessor(t.entry.accessor)).toBeNull();
  });

  it('hands out each remaining use exactly once under concurrency', async () => {
    const { ts } = setup();
    const root = await rootToken(ts);
    const t = await ts.create(root, { policies: ['a'], numUses: 5 });
    const results = await Promise.all(Array.from({ length: 12 }, () => ts.useToken(t.entry)));
    expect(results.filter((r) => r !== null)).toHaveLength(5);
    expect(results.filter((r) => r?.lastUse)).toHaveLength(1);
  });
});

describe('batch tokens', () => {
  it('are self-contained, not stored, not renewable, not revocable, and cannot create children', async () => {
    const { ts, store, clock } = setup();
    const root = await rootToken(ts);
    const before = [...store.data.keys()];
    const b = await ts.create(root, { type: 'batch', policies: ['a'], ttl: 100 });
    expect([...store.data.keys()]).toEqual(before);
    expect(b.entry.accessor).toBe('');
    expect(b.entry.renewable).toBe(false);

    const again = createTokenStoreLike(ts);
    expect((await again(b.id))?.policies).toEqual(['a', 'default']);
    await expectError(ts.create(b.entry, {}), 400, /batch tokens cannot create child/);
    await expectError(ts.renew(b.entry, 0), 400, /cannot be renewed/);
    await expectError(ts.revoke(b.id), 400, /cannot be revoked/);
    await expectError(ts.create(root, { type: 'batch', numUses: 2 }), 400);
    await expectError(ts.create(root, { type: 'batch' }), 400, /root/);

    clock.advance(101);
    expect(await ts.lookup(b.id)).toBeNull();
  });

  it('rejects a tampered or foreign blob', async () => {
    const { ts } = setup();
    const other = setup().ts;
    const root = await rootToken(ts);
    const b = await ts.create(root, { type: 'batch', policies: ['a'] });
    const body = b.id.slice(4);
    const flipped = `srb.${body.slice(0, 20)}${body[20] === 'A' ? 'B' : 'A'}${body.slice(21)}`;
    expect(await ts.lookup(flipped)).toBeNull();
    expect(await other.lookup(b.id)).toBeNull();
    expect(await ts.lookup('srb.')).toBeNull();
  });

  it('die with their parent', async () => {
    const { ts } = setup();
    const root = await rootToken(ts);
    const parent = await ts.create(root, { policies: ['a'] });
    const b = await ts.create(parent.entry, { type: 'batch' });
    expect(await ts.lookup(b.id)).not.toBeNull();
    await ts.revoke(parent.id);
    expect(await ts.lookup(b.id)).toBeNull();
  });
});

/** Lookup through a fresh call path, so the test does not just read back what create returned. */
function createTokenStoreLike(ts: TokenStore) {
  return (id: string) => {
    ts.clearCache();
    return ts.lookup(id);
  };
}

describe('accessors', () => {
  it('looks up and revokes by accessor, and lists accessors', async () => {
    const { ts } = setup();
    const root = await rootToken(ts);
    const a = await ts.create(root, { policies: ['a'] });
    const b = await ts.create(root, { policies: ['b'] });
    ts.clearCache();
    expect((await ts.lookupByAccessor(a.entry.accessor))?.key).toBe(a.entry.key);
    expect(await ts.listAccessors()).toEqual([root.accessor, a.entry.accessor, b.entry.accessor].sort());
    expect(ts.lookupResponse(a.entry).id).toBe('');
    expect(await ts.revokeAccessor(a.entry.accessor)).toBe(true);
    expect(await ts.lookup(a.id)).toBeNull();
    expect(await ts.lookupByAccessor(a.entry.accessor)).toBeNull();
    expect(await ts.revokeAccessor(a.entry.accessor)).toBe(false);
    expect(await ts.listAccessors()).not.toContain(a.entry.accessor);
  });
});

describe('revocation', () => {
  it('revokes a 1000-deep tree iteratively, children before parents, with the leases of every node', async () => {
    const { ts, store, revokedLeases } = setup();
    const root = await rootToken(ts);
    const chain: { id: string; entry: TokenEntry }[] = [];
    let parent = await ts.create(root, { policies: ['a'] });
    chain.push(parent);
    for (let i = 1; i < 1000; i++) {
      parent = await ts.create(parent.entry, {});
      chain.push(parent);
    }
    const sibling = await ts.create(chain[500]!.entry, {});
    ts.clearCache();
    expect(await ts.revoke(chain[0]!.id)).toBe(true);

    for (const t of [...chain, sibling]) expect(await ts.lookup(t.id)).toBeNull();
    expect(revokedLeases).toHaveLength(1001);
    expect(new Set(revokedLeases)).toEqual(new Set([...chain, sibling].map((t) => t.entry.key)));
    const pos = (k: string) => revokedLeases.indexOf(k);
    for (let i = 1; i < chain.length; i++) expect(pos(chain[i]!.entry.key)).toBeLessThan(pos(chain[i - 1]!.entry.key));
    // only the root token remains in storage
    const left = [...store.data.keys()].filter((k) => !k.startsWith('sys/token/roles/'));
    expect(left.sort()).toEqual(
      [`sys/token/id/${root.key}`, ...[...store.data.keys()].filter((k) => k.startsWith('sys/token/accessor/'))].sort(),
    );
    expect((await ts.lookup(chain[0]!.id))).toBeNull();
    expect(await ts.revoke(chain[0]!.id)).toBe(false);
  });

  it('never resurrects a token that a slow concurrent renew was writing while it was revoked', async () => {
    const { ts, store } = setup();
    const root = await rootToken(ts);
    const t = await ts.create(root, { policies: ['a'] });
    // The renewal's write is slow to land; the revocation runs meanwhile.
    const put = store.put.bind(store);
    let delayNext = true;
    store.put = async (k, v) => {
      if (delayNext && k.endsWith(t.entry.key)) {
        delayNext = false;
        await new Promise((r) => setTimeout(r, 20));
      }
      await put(k, v);
    };
    const renewing = ts.renew(t.entry, 60);
    await new Promise((r) => setImmediate(r));
    await ts.revoke(t.id);
    await renewing.catch(() => undefined);
    expect(store.data.has(`sys/token/id/${t.entry.key}`)).toBe(false);
    ts.clearCache();
    expect(await ts.lookup(t.id)).toBeNull();
  });

  it('never serves a revoked token from the cache that a storage read in flight during the revocation answered late', async () => {
    const { ts, store } = setup();
    const root = await rootToken(ts);
    const t = await ts.create(root, { policies: ['a'] });
    // A storage wrapper that holds one read of the token's entry: it reads the entry as it is now
    // (live) and answers only when released, after the revocation has finished.
    const get = store.get.bind(store);
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let held = false;
    store.get = async (k) => {
      if (!held && k === `sys/token/id/${t.entry.key}`) {
        held = true;
        const before = await get(k);
        await released;
        return before;
      }
      return get(k);
    };
    ts.clearCache(); // the lookup below reads storage, as after an eviction
    const slowLookup = ts.lookup(t.id);
    await new Promise((r) => setImmediate(r));
    expect(held).toBe(true);
    expect(await ts.revoke(t.id)).toBe(true);
    expect(store.data.has(`sys/token/id/${t.entry.key}`)).toBe(false);
    release();
    await slowLookup;
    // No clearCache here: the lookup after the revocation goes through the same cache.
    expect(await ts.lookup(t.id)).toBeNull();
    expect(await ts.lookupByAccessor(t.entry.accessor)).toBeNull();
  });

  it('revoke-orphan revokes one token and turns its children into orphans', async () => {
    const { ts, revokedLeases } = setup();
    const root = await rootToken(ts);
    const parent = await ts.create(root, { policies: ['a'] });
    const c1 = await ts.create(parent.entry, {});
    const c2 = await ts.create(parent.entry, {});
    const grand = await ts.create(c1.entry, {});
    expect(await ts.revokeOrphan(parent.id)).toBe(true);
    expect(await ts.lookup(parent.id)).toBeNull();
    expect(revokedLeases).toEqual([parent.entry.key]);
    ts.clearCache();
    const l1 = await ts.lookup(c1.id);
    expect(l1?.parent).toBe('');
    expect((await ts.lookup(c2.id))?.parent).toBe('');
    expect((await ts.lookup(grand.id))?.parent).toBe(c1.entry.key);
    // the orphaned subtree is still a tree
    await ts.revoke(c1.id);
    expect(await ts.lookup(grand.id)).toBeNull();
    expect(await ts.lookup(c2.id)).not.toBeNull();
  });

  it('resumes a revocation cut short by a failing lease backend, via tidy', async () => {
    const { ts, leases } = setup();
    const root = await rootToken(ts);
    const top = await ts.create(root, { policies: ['a'] });
    const mid = await ts.create(top.entry, {});
    const leaf = await ts.create(mid.entry, {});
    leases.fail = (key) => key === mid.entry.key;
    await expect(ts.revoke(top.id)).rejects.toThrow('lease backend down');
    // the leaf went first; the root is already invalid because it is marked pending
    expect(await ts.lookup(leaf.id)).toBeNull();
    expect(await ts.lookup(top.id)).toBeNull();
    ts.clearCache();
    expect(await ts.lookup(top.id)).toBeNull();

    leases.fail = null;
    const result = await ts.tidy();
    expect(result.revoked).toBeGreaterThanOrEqual(1);
    expect(await ts.lookup(mid.id)).toBeNull();
    expect(await ts.lookupByAccessor(top.entry.accessor)).toBeNull();
    expect((await ts.tidy()).revoked).toBe(0);
  });

  it('tidy removes dangling accessor and parent entries and revokes tokens whose parent is gone', async () => {
    const { ts, store } = setup();
    const root = await rootToken(ts);
    const parent = await ts.create(root, { policies: ['a'] });
    const child = await ts.create(parent.entry, {});
    // simulate a torn write: the parent's entry vanished without the rest
    await store.delete(`sys/token/id/${parent.entry.key}`);
    ts.clearCache();
    const r = await ts.tidy();
    expect(r.revoked).toBe(1);
    expect(r.accessorsRemoved).toBe(1);
    expect(await ts.lookup(child.id)).toBeNull();
    expect([...store.data.keys()].filter((k) => k.startsWith('sys/token/parent/'))).toEqual([]);
  });
});

describe('expiry through the expiration manager', () => {
  /** A token store and the real expiration manager over one store, as the core wires them. */
  function wired(store: Physical = createInmemPhysical()) {
    const clock = createManualClock(Date.UTC(2030, 0, 1));
    const keys = { hmacKey: randomBytes(32), batchKey: randomBytes(32) };
    const make = () => {
      const revoker = { revokeSecret: async () => undefined, renewSecret: async () => ({ ttl: 0 }) };
      const mgr: ExpirationManager = createExpirationManager({
        store,
        revoker,
        logger: silent,
        clock,
        mountTtls: () => ({ defaultTtl: 3600, maxTtl: 86_400 }),
        tokenExists: (k) => ts.isLiveKey(k),
        revokeToken: (k) => ts.revokeLeased(k),
      });
      const ts: TokenStore = createTokenStore({ store, ...keys, clock, systemDefaultTtl: 3600, systemMaxTtl: 86_400, leases: mgr, logger: silent });
      return { mgr, ts };
    };
    const w = { store, clock, ...make(), restart: () => Object.assign(w, (w.mgr.stop(), make())) };
    return w;
  }
  const advance = async (w: ReturnType<typeof wired>, sec: number) => {
    w.clock.advance(sec * 1000);
    await w.mgr.whenIdle();
  };

  it('treats expired tokens as nonexistent, and revokes them with their children when their lease falls due', async () => {
    const w = wired();
    const root = await w.ts.createRoot();
    const t = await w.ts.create(root.entry, { policies: ['a'], ttl: 60 });
    const child = await w.ts.create(t.entry, { ttl: 100 });
    expect(child.entry.expireTime).toBe(t.entry.expireTime);
    const orphan = await w.ts.create(t.entry, { ttl: 600, orphanEndpoint: true });
    // Tokens are leases under their creation path; the root token (no TTL) has none.
    expect(await w.mgr.listPrefix('', 'auth/token/')).toEqual(['create-orphan/', 'create/']);
    expect((await w.mgr.lookup(`auth/token/create/${t.entry.key}`)).ttl).toBe(60);
    await advance(w, 59);
    expect(await w.ts.lookup(t.id)).not.toBeNull();
    w.clock.advance(1000);
    expect(await w.ts.lookup(t.id)).toBeNull();
    expect(await w.ts.lookupByAccessor(t.entry.accessor)).toBeNull();
    await w.mgr.whenIdle();
    expect(await w.store.get(`sys/token/id/${t.entry.key}`)).toBeNull();
    expect(await w.store.get(`sys/token/id/${child.entry.key}`)).toBeNull();
    expect(await w.ts.lookup(orphan.id)).not.toBeNull();
    expect(await w.mgr.listPrefix('', 'auth/token/')).toEqual(['create-orphan/']);
    expect(await w.ts.lookup(root.id)).not.toBeNull();
  });

  it('moves the lease with each renewal, and drops it with the token', async () => {
    const w = wired();
    const root = await w.ts.createRoot();
    const t = await w.ts.create(root.entry, { policies: ['a'], period: 100 });
    await advance(w, 90);
    await w.ts.renew(t.entry, 0);
    await advance(w, 20);
    expect(await w.ts.lookup(t.id)).not.toBeNull();
    await advance(w, 100);
    expect(await w.store.get(`sys/token/id/${t.entry.key}`)).toBeNull();

    const u = await w.ts.create(root.entry, { policies: ['a'], ttl: 600 });
    expect(w.mgr.stats().leases).toBe(1);
    await w.ts.revoke(u.id);
    expect(w.mgr.stats().leases).toBe(0);
    expect(await w.mgr.listPrefix('', 'auth/token/create/')).toEqual([]);
  });

  it('expires tokens after a restart from the due index alone: no token is read, none is scanned', async () => {
    const inner = createInmemPhysical();
    let tokenReads = 0;
    const store = Object.create(inner) as Physical;
    store.get = (k) => (k.startsWith('sys/token/') && (tokenReads++, true), inner.get(k));
    store.scan = (p) => (p.startsWith('sys/token/') && (tokenReads++, true), inner.scan(p));
    const w = wired(store);
    const root = await w.ts.createRoot();
    const ts = await Promise.all([60, 120, 180].map((ttl) => w.ts.create(root.entry, { policies: ['a'], ttl })));
    w.restart();
    tokenReads = 0;
    await w.ts.resumeRevocations();
    expect(await w.mgr.restore()).toMatchObject({ loaded: 3 });
    expect(tokenReads).toBe(0);
    await advance(w, 121);
    expect(await inner.get(`sys/token/id/${ts[0]!.entry.key}`)).toBeNull();
    expect(await inner.get(`sys/token/id/${ts[1]!.entry.key}`)).toBeNull();
    expect(await inner.get(`sys/token/id/${ts[2]!.entry.key}`)).not.toBeNull();
  });

  it('finishes a revocation cut short, at the next unseal, from the pending index', async () => {
    const { ts, leases, store } = setup();
    const root = await rootToken(ts);
    const top = await ts.create(root, { policies: ['a'] });
    const leaf = await ts.create(top.entry, {});
    leases.fail = (key) => key === top.entry.key;
    await expect(ts.revoke(top.id)).rejects.toThrow('lease backend down');
    expect([...store.data.keys()].filter((k) => k.startsWith('sys/token/pending/'))).toEqual([`sys/token/pending/${top.entry.key}`]);
    expect(await ts.lookup(leaf.id)).toBeNull();
    leases.fail = null;
    await ts.resumeRevocations();
    expect(store.data.has(`sys/token/id/${top.entry.key}`)).toBe(false);
    expect([...store.data.keys()].filter((k) => k.startsWith('sys/token/pending/'))).toEqual([]);
  });
});

describe('renewal', () => {
  it('refuses non-renewable and non-expiring tokens', async () => {
    const { ts } = setup();
    const root = await rootToken(ts);
    await expectError(ts.renew(root, 0), 400, /not renewable/);
    const fixed = await ts.create(root, { policies: ['a'], renewable: false });
    await expectError(ts.renew(fixed.entry, 60), 400, /not renewable/);
  });

  it('extends by the increment, never past creation + max TTL', async () => {
    const { ts, clock } = setup({ defaultTtl: 100, maxTtl: 1000 });
    const root = await rootToken(ts);
    const t = await ts.create(root, { policies: ['a'] });
    clock.advance(50);
    const r1 = await ts.renew(t.entry, 300);
    expect(r1.entry.ttl).toBe(300);
    expect(r1.entry.expireTime).toBe(clock.now() + 300_000);
    expect(ts.lookupResponse(r1.entry).last_renewal_time).toBe(Math.floor(clock.now() / 1000));
    const r2 = await ts.renew(t.entry, 0);
    expect(r2.entry.ttl).toBe(100);
    clock.advance(90);
    const r3 = await ts.renew(t.entry, 900);
    expect(r3.entry.ttl).toBe(860);
    expect(r3.warnings.join()).toMatch(/capped/);
    clock.advance(860);
    expect(await ts.lookup(t.id)).toBeNull();
    await expectError(ts.renew(t.entry, 10), 400);
  });

  it('renews periodic tokens indefinitely to the period, up to explicit max TTL', async () => {
    const { ts, clock } = setup({ maxTtl: 1000 });
    const root = await rootToken(ts);
    const p = await ts.create(root, { policies: ['a'], period: 300 });
    for (let i = 0; i < 10; i++) {
      clock.advance(250);
      const r = await ts.renew(p.entry, 5000);
      expect(r.entry.ttl).toBe(300);
    }
    const capped = await ts.create(root, { policies: ['a'], period: 300, explicitMaxTtl: 500 });
    clock.advance(250);
    expect((await ts.renew(capped.entry, 0)).entry.ttl).toBe(250);
    clock.advance(250);
    await expectError(ts.renew(capped.entry, 0), 400);
  });
});

describe('roles', () => {
  it('creates tokens from a role: allowed beyond the parent, disallowed, path suffix, type, caps', async () => {
    const { ts } = setup();
    const root = await rootToken(ts);
    const parent = await ts.create(root, { policies: ['a'] });
    await ts.writeRole('web', {
      allowedPolicies: ['web', 'db'],
      disallowedPolicies: ['admin'],
      pathSuffix: 'v1',
      tokenNumUses: 5,
      tokenExplicitMaxTtl: 600,
      tokenBoundCidrs: ['10.0.0.0/8'],
    });
    const role = await ts.readRole('web');
    expect(role?.name).toBe('web');
    expect(await ts.listRoles()).toEqual(['web']);
    // Case-sensitive, as in Vault (an ACL on the lower-case name must cover every way to the role).
    expect(await ts.readRole('Web')).toBeNull();

    const t = await ts.create(parent.entry, { roleName: 'web', numUses: 10 });
    expect(t.entry.policies).toEqual(['db', 'default', 'web']);
    expect(t.entry.path).toBe('auth/token/create/web/v1');
    expect(t.entry.numUses).toBe(5);
    expect(t.entry.ttl).toBe(600);
    expect(t.entry.boundCidrs).toEqual(['10.0.0.0/8']);
    expect(ts.lookupResponse(t.entry).role).toBe('web');
    expect((await ts.create(parent.entry, { roleName: 'web', policies: ['web'] })).entry.policies).toEqual(['default', 'web']);
    await expectError(ts.create(parent.entry, { roleName: 'web', policies: ['other'] }), 400, /allowed policies/);
    await expectError(ts.create(parent.entry, { roleName: 'nope' }), 400, /role_name/);

    await ts.writeRole('inherit', { disallowedPolicies: ['a'], orphan: true, tokenPeriod: 120 });
    const inh = await ts.create(parent.entry, { roleName: 'inherit' });
    expect(inh.entry.policies).toEqual(['default']);
    expect(inh.entry.parent).toBe('');
    expect(inh.entry.period).toBe(120);
    await expectError(ts.create(parent.entry, { roleName: 'inherit', policies: ['a'] }), 400, /disallowed/);

    await ts.writeRole('batchy', { tokenType: 'batch', allowedPoliciesGlob: ['app-*'] });
    const b = await ts.create(parent.entry, { roleName: 'batchy', policies: ['app-1'] });
    expect(b.entry.type).toBe('batch');
    await expectError(ts.create(parent.entry, { roleName: 'batchy', type: 'service', policies: ['app-1'] }), 400, /type/);

    await ts.writeRole('web', { renewable: false });
    expect((await ts.readRole('web'))?.allowedPolicies).toEqual(['db', 'web']);
    expect((await ts.create(parent.entry, { roleName: 'web' })).entry.renewable).toBe(false);
    await ts.deleteRole('web');
    expect(await ts.readRole('web')).toBeNull();
  });

  it('validates role fields', async () => {
    const { ts } = setup();
    await expectError(ts.writeRole('bad name', {}), 400, /role_name/);
    await expectError(ts.writeRole('r', { tokenBoundCidrs: ['10.0.0.0/33'] }), 400, /token_bound_cidrs/);
    await expectError(ts.writeRole('r', { pathSuffix: 'a/../b' }), 400, /path_suffix/);
    await expectError(ts.writeRole('r', { tokenTtl: 100, tokenMaxTtl: 50 }), 400, /token_ttl/);
  });
});

describe('CIDR binding', () => {
  it('checks IPv4, IPv6 and IPv4-mapped addresses', async () => {
    const { ts } = setup();
    const root = await rootToken(ts);
    await ts.writeRole('bound', { tokenBoundCidrs: ['10.1.0.0/16', '2001:db8::/32', '192.168.1.7'] });
    const { entry } = await ts.create(root, { roleName: 'bound', policies: ['a'] });
    expect(ts.checkCidr(entry, '10.1.2.3')).toBe(true);
    expect(ts.checkCidr(entry, '::ffff:10.1.2.3')).toBe(true);
    expect(ts.checkCidr(entry, '10.2.0.1')).toBe(false);
    expect(ts.checkCidr(entry, '2001:db8:1::5')).toBe(true);
    expect(ts.checkCidr(entry, '2001:db9::5')).toBe(false);
    expect(ts.checkCidr(entry, '192.168.1.7')).toBe(true);
    expect(ts.checkCidr(entry, '192.168.1.8')).toBe(false);
    expect(ts.checkCidr(entry, 'not-an-ip')).toBe(false);
    const free = await ts.create(root, { policies: ['a'] });
    expect(ts.checkCidr(free.entry, '8.8.8.8')).toBe(true);
  });
});

describe('login tokens and rendering', () => {
  it('renews a login token only as its auth mount answers (refusal, its TTLs, unchanged policies)', async () => {
    let answer: (e: TokenEntry) => LoginRenewal = () => {
      throw new StrongroomError('bad_request', 'role "app" does not exist during renewal');
    };
    const asked: TokenEntry[] = [];
    const { ts, clock } = setup({ defaultTtl: 3600, maxTtl: 86400, renewLogin: async (e) => (asked.push(e), answer(e)) });
    const auth = { displayName: '', policies: ['app'], noDefaultPolicy: false, metadata: { role_name: 'app' }, internalData: { role_name: 'app', role_id: 'r-1' }, ttl: 600, maxTtl: 0, explicitMaxTtl: 0, period: 0, numUses: 0, renewable: true, boundCidrs: [], tokenType: '' };
    const { id, entry } = await ts.createFromLogin(auth, { mountUuid: 'm-1', path: 'auth/approle/login', mountPath: 'auth/approle/' });
    expect(entry.login).toEqual({ mountUuid: 'm-1', internalData: { role_name: 'app', role_id: 'r-1' } });
    expect(ts.lookupResponse(entry, id)).not.toHaveProperty('login');

    clock.advance(100);
    await expectError(ts.renew(entry, 0), 400, /does not exist during renewal/);
    expect((await ts.lookup(id))!.expireTime).toBe(entry.expireTime);
    expect(asked[0]!.login!.internalData).toEqual({ role_name: 'app', role_id: 'r-1' });

    answer = (e) => ({ ttl: 900, maxTtl: 0, period: 0, policies: e.policies });
    const renewed = await ts.renew(entry, 0);
    expect(renewed.entry.ttl).toBe(900);
    expect(renewed.entry.expireTime).toBe(clock.now() + 900_000);

    answer = () => ({ ttl: 900, maxTtl: 0, period: 0, policies: ['other'] });
    await expectError(ts.renew(renewed.entry, 0), 400, /policies have changed/);

    // Tokens from no plugin login (token store, batch) never ask.
    const root = await rootToken(ts);
    const child = await ts.create(root, { policies: ['a'], ttl: 60 });
    const before = asked.length;
    await ts.renew(child.entry, 0);
    const batch = await ts.createFromLogin({ ...auth, tokenType: 'batch' }, { mountUuid: 'm-1', path: 'auth/approle/login', mountPath: 'auth/approle/' });
    expect(batch.entry.login).toBeUndefined();
    expect(asked.length).toBe(before);
  });

  it('makes an orphan token from an auth method response', async () => {
    const { ts, clock } = setup({ defaultTtl: 3600, maxTtl: 7200 });
    const { id, entry } = await ts.createFromLogin(
      {
        displayName: '',
        policies: ['app'],
        noDefaultPolicy: false,
        metadata: { role_name: 'app' },
        internalData: {},
        ttl: 0,
        maxTtl: 0,
        explicitMaxTtl: 0,
        period: 0,
        numUses: 0,
        renewable: true,
        boundCidrs: ['127.0.0.1/32'],
        tokenType: '',
      },
      { path: 'auth/approle/login', mountPath: 'auth/approle/', mountDefaultTtl: 1200 },
    );
    expect(entry).toMatchObject({ parent: '', displayName: 'approle', path: 'auth/approle/login', ttl: 1200, type: 'service' });
    const auth = ts.authBlock(entry, id);
    expect(auth).toEqual({
      client_token: id,
      accessor: entry.accessor,
      policies: ['app', 'default'],
      token_policies: ['app', 'default'],
      metadata: { role_name: 'app' },
      lease_duration: 1200,
      renewable: true,
      entity_id: '',
      token_type: 'service',
      orphan: true,
      mfa_requirement: null,
      num_uses: 0,
    });
    const data = ts.lookupResponse(entry, id);
    expect(data).toEqual({
      accessor: entry.accessor,
      creation_time: Math.floor(clock.now() / 1000),
      creation_ttl: 1200,
      display_name: 'approle',
      entity_id: '',
      expire_time: new Date(clock.now() + 1_200_000).toISOString(),
      explicit_max_ttl: 0,
      id,
      issue_time: new Date(clock.now()).toISOString(),
      meta: { role_name: 'app' },
      num_uses: 0,
      orphan: true,
      path: 'auth/approle/login',
      policies: ['app', 'default'],
      renewable: true,
      ttl: 1200,
      type: 'service',
      bound_cidrs: ['127.0.0.1/32'],
    });
  });

  it('renders a root token lookup without lease fields', async () => {
    const { ts } = setup();
    const root = await ts.createRoot('r00t');
    const data = ts.lookupResponse(root.entry, root.id);
    expect(data).toMatchObject({ id: 'r00t', expire_time: null, ttl: 0, policies: ['root'], path: 'auth/token/root', orphan: true });
    expect(data).not.toHaveProperty('issue_time');
    expect(data).not.toHaveProperty('renewable');
  });
});
