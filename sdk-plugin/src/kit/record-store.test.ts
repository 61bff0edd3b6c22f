import { z } from 'zod';
import { createMemoryStorage, type Storage, type StorageOp } from '../storage.js';
import { StrongroomError } from '../errors.js';
import { createRecordStore, rawBytesCodec, readRecord } from './record-store.js';

const Role = z.object({ name: z.string(), ttl: z.number().default(0), policies: z.array(z.string()).default([]) });

/** A storage that counts reads and can fail its next batch, as the core's fault injector does. */
function counted(inner: Storage = createMemoryStorage()) {
  const reads: string[] = [];
  let failBatch = false;
  const s: Storage = {
    ...inner,
    get: (k) => (reads.push(k), inner.get(k)),
    batch: async (ops: StorageOp[]) => {
      if (failBatch) {
        failBatch = false;
        throw new Error('injected storage fault: batch');
      }
      return inner.batch(ops);
    },
  };
  return { s, reads, inner, failNextBatch: () => (failBatch = true) };
}

/** A storage whose `method` answers, while held, only once released (a load overlapping a write). */
function gated(method: 'get' | 'list') {
  const mem = createMemoryStorage();
  let release!: () => void;
  let gate: Promise<void> | null = null;
  const s: Storage = {
    ...mem,
    [method]: async (k: string) => {
      const v = await mem[method](k);
      if (gate) await gate;
      return v;
    },
  };
  return {
    s,
    hold: () => void (gate = new Promise<void>((r) => (release = r))),
    release: () => {
      gate = null;
      release();
    },
  };
}

describe('record store', () => {
  it('stores typed records under the prefix, fills schema defaults and lists names', async () => {
    const mem = createMemoryStorage();
    const store = createRecordStore(mem);
    const roles = store.kind('role/', Role);
    const stored = await roles.put('web', { name: 'web', ttl: 60, policies: ['a'] });
    expect(stored).toEqual({ name: 'web', ttl: 60, policies: ['a'] });
    await mem.put('role/old', Buffer.from(JSON.stringify({ name: 'old' })));
    expect(await roles.get('old')).toEqual({ name: 'old', ttl: 0, policies: [] });
    expect(await roles.get('missing')).toBeNull();
    expect(await roles.list()).toEqual(['old', 'web']);
    expect(await roles.list({ after: 'old' })).toEqual(['web']);
    expect(await roles.list({ limit: 1 })).toEqual(['old']);
    expect(JSON.parse(Buffer.from((await mem.get('role/web'))!).toString())).toEqual({ name: 'web', ttl: 60, policies: ['a'] });
  });

  it('refuses to write a record that does not match its schema, and names the field, not the value', async () => {
    const store = createRecordStore(createMemoryStorage());
    const roles = store.kind('role/', Role);
    const err = await roles.put('x', { name: 'x', ttl: 'secret-value' } as never).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StrongroomError);
    expect(String((err as Error).message)).toContain('ttl');
    expect(String((err as Error).message)).not.toContain('secret-value');
  });

  it('serves reads from its cache and gives each reader its own copy', async () => {
    const { s, reads } = counted();
    const store = createRecordStore(s);
    const roles = store.kind('role/', Role);
    await roles.put('web', { name: 'web', ttl: 1, policies: ['a'] });
    const a = await roles.get('web');
    const b = await roles.get('web');
    expect(reads).toEqual(['role/web']);
    a!.policies.push('changed');
    expect(b!.policies).toEqual(['a']);
    expect((await roles.get('web'))!.policies).toEqual(['a']);
    const shared = await roles.view('web');
    expect(Object.isFrozen(shared)).toBe(true);
    expect(roles.peek('web')).toBe(shared);
  });

  it('drops a record on invalidation, and does not cache kinds that ask not to be', async () => {
    const { s, reads, inner } = counted();
    const store = createRecordStore(s);
    const roles = store.kind('role/', Role);
    const wal = store.kind('wal/', z.object({ n: z.number() }), { cache: false });
    await roles.put('web', { name: 'web', ttl: 1, policies: [] });
    await roles.get('web');
    await inner.put('role/web', Buffer.from(JSON.stringify({ name: 'web', ttl: 2 })));
    expect((await roles.get('web'))!.ttl).toBe(1);
    store.invalidate('role/web');
    expect((await roles.get('web'))!.ttl).toBe(2);
    await wal.put('a', { n: 1 });
    await wal.get('a');
    await wal.get('a');
    expect(reads.filter((k) => k === 'wal/a')).toHaveLength(2);
  });

  it('keeps only the records `keep` allows', async () => {
    const { s, reads } = counted();
    const store = createRecordStore(s);
    const ids = store.kind('id/', z.object({ uses: z.number() }), { keep: (v) => v.uses === 0 });
    await ids.put('unlimited', { uses: 0 });
    await ids.put('limited', { uses: 3 });
    for (let i = 0; i < 3; i++) {
      await ids.get('unlimited');
      await ids.get('limited');
    }
    expect(reads.filter((k) => k === 'id/unlimited')).toHaveLength(1);
    expect(reads.filter((k) => k === 'id/limited')).toHaveLength(3);
  });

  it('serializes read-modify-write of one record with update', async () => {
    const store = createRecordStore(createMemoryStorage());
    const counter = store.single('counter', z.object({ n: z.number() }));
    await Promise.all(Array.from({ length: 20 }, () => counter.update(async (c) => ({ n: (c?.n ?? 0) + 1 }))));
    expect(await counter.get()).toEqual({ n: 20 });
    expect(await counter.update(() => undefined)).toEqual({ n: 20 });
    expect(await counter.update(() => null)).toBeNull();
    expect(await counter.get()).toBeNull();
  });

  it('writes a batch atomically: a failed batch leaves neither part, and the cache never shows half of it', async () => {
    const { s, inner, failNextBatch } = counted();
    const store = createRecordStore(s);
    const roles = store.kind('role/', Role);
    const index = store.kind('role_id/', z.object({ name: z.string() }));
    await store.batch([roles.putOp('web', { name: 'web', ttl: 0, policies: [] }), index.putOp('abc', { name: 'web' })]);
    expect(await roles.get('web')).not.toBeNull();
    expect(await index.get('abc')).toEqual({ name: 'web' });

    failNextBatch();
    await expect(store.batch([roles.deleteOp('web'), index.deleteOp('abc'), index.putOp('def', { name: 'web' })])).rejects.toThrow('injected');
    expect(await roles.get('web')).not.toBeNull();
    expect(await index.get('abc')).toEqual({ name: 'web' });
    expect(await inner.get('role_id/def')).toBeNull();

    await store.batch([roles.deleteOp('web'), index.deleteOp('abc')]);
    expect(await roles.get('web')).toBeNull();
    expect(await index.get('abc')).toBeNull();
  });

  it('does not keep a load that overlapped a write', async () => {
    const g = gated('get');
    const store = createRecordStore(g.s);
    const roles = store.kind('role/', Role);
    await roles.put('web', { name: 'web', ttl: 1, policies: [] });
    g.hold();
    const stale = roles.get('web');
    await roles.put('web', { name: 'web', ttl: 2, policies: [] });
    g.release();
    expect((await stale)!.ttl).toBe(1);
    expect((await roles.get('web'))!.ttl).toBe(2);
  });

  it('caches the name list of a kind that asks, until a key under its prefix changes', async () => {
    const mem = createMemoryStorage();
    const lists: string[] = [];
    const s: Storage = { ...mem, list: (p) => (lists.push(p), mem.list(p)) };
    const store = createRecordStore(s);
    const issuers = store.kind('issuer/', z.object({ name: z.string() }), { cacheList: true });
    const roles = store.kind('role/', Role);
    await issuers.put('a', { name: 'x' });
    expect(await issuers.list()).toEqual(['a']);
    expect(await issuers.list()).toEqual(['a']);
    expect(lists).toEqual(['issuer/']);
    await roles.put('web', { name: 'web', ttl: 0, policies: [] });
    await roles.list();
    await roles.list();
    expect(await issuers.list()).toEqual(['a']);
    expect(lists).toEqual(['issuer/', 'role/', 'role/']);
    await issuers.put('b', { name: 'y' });
    expect(await issuers.list()).toEqual(['a', 'b']);
    await store.batch([issuers.deleteOp('a')]);
    expect(await issuers.list()).toEqual(['b']);
    await mem.put('issuer/c', Buffer.from('{"name":"z"}'));
    store.invalidate('issuer/c');
    expect(await issuers.list()).toEqual(['b', 'c']);
    expect(await issuers.list({ limit: 1 })).toEqual(['b']);
    expect(lists.filter((p) => p === 'issuer/')).toHaveLength(4);
  });

  it('does not keep a name list loaded while a key under the prefix was written', async () => {
    const g = gated('list');
    const store = createRecordStore(g.s);
    const issuers = store.kind('issuer/', z.object({ name: z.string() }), { cacheList: true });
    g.hold();
    const stale = issuers.list();
    await issuers.put('a', { name: 'x' });
    g.release();
    expect(await stale).toEqual([]);
    expect(await issuers.list()).toEqual(['a']);
  });

  it('memo computes once per cached record and again once the record changed', async () => {
    const store = createRecordStore(createMemoryStorage());
    const keys = store.kind('key/', z.object({ material: z.string() }));
    let runs = 0;
    const parsed = keys.memo((k) => (runs++, k.material.toUpperCase()));
    await keys.put('a', { material: 'abc' });
    expect(parsed((await keys.view('a'))!)).toBe('ABC');
    expect(parsed((await keys.view('a'))!)).toBe('ABC');
    expect(runs).toBe(1);
    await keys.put('a', { material: 'def' });
    expect(parsed((await keys.view('a'))!)).toBe('DEF');
    expect(runs).toBe(2);
  });

  it('stores a raw-bytes record as the bytes alone', async () => {
    const mem = createMemoryStorage();
    const store = createRecordStore(mem);
    const salt = store.single('salt', z.object({ bytes: z.string() }), { codec: rawBytesCodec });
    await mem.put('salt', Buffer.from([1, 2, 3]));
    expect(await salt.view()).toEqual({ bytes: Buffer.from([1, 2, 3]).toString('base64') });
    await salt.put({ bytes: Buffer.from([9, 8]).toString('base64') });
    expect([...(await mem.get('salt'))!]).toEqual([9, 8]);
  });

  it('resize bounds the cache, evicting the least recently used', async () => {
    const { s, reads } = counted();
    const store = createRecordStore(s, { cacheMax: 3 });
    const roles = store.kind('role/', Role);
    for (const n of ['a', 'b', 'c']) await roles.put(n, { name: n, ttl: 0, policies: [] });
    for (const n of ['a', 'b', 'c']) await roles.view(n);
    expect(store.cached()).toBe(3);
    await roles.view('a');
    store.resize(2);
    expect(store.cached()).toBe(2);
    reads.length = 0;
    await roles.view('a');
    await roles.view('c');
    expect(reads).toEqual([]);
    await roles.view('b');
    expect(reads).toEqual(['role/b']);
    store.resize(0);
    for (const n of ['a', 'b', 'c']) await roles.view(n);
    expect(store.cached()).toBe(3);
  });

  it('a single record can be locked for a read-modify-write of several records', async () => {
    const store = createRecordStore(createMemoryStorage());
    const list = store.single('list', z.object({ names: z.array(z.string()) }));
    await list.put({ names: [] });
    await Promise.all(
      ['a', 'b', 'c'].map((n) =>
        list.lock(async () => {
          const cur = (await list.get())!;
          await new Promise((r) => setImmediate(r));
          await list.put({ names: [...cur.names, n] });
        }),
      ),
    );
    expect((await list.get())!.names.sort()).toEqual(['a', 'b', 'c']);
  });
});

describe('readRecord', () => {
  it('answers a named record without its name, and nothing for a missing one', async () => {
    const roles = createRecordStore(createMemoryStorage()).kind('roles/', z.object({ name: z.string(), ttl: z.number() }));
    await roles.put('app', { name: 'app', ttl: 60 });
    expect(await readRecord(roles, 'app')).toEqual({ data: { ttl: 60 } });
    expect(await readRecord(roles, 'nope')).toBeNull();
  });
});
