import { z } from 'zod';
import { createMemoryStorage, type Storage, type StorageOp } from '../storage.js';
import { StrongroomError } from '../errors.js';
import { createRecordStore } from './record-store.js';

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
    const mem = createMemoryStorage();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let slow = false;
    const s: Storage = {
      ...mem,
      get: async (k) => {
        const v = await mem.get(k);
        if (slow) await gate;
        return v;
      },
    };
    const store = createRecordStore(s);
    const roles = store.kind('role/', Role);
    await roles.put('web', { name: 'web', ttl: 1, policies: [] });
    slow = true;
    const stale = roles.get('web');
    await roles.put('web', { name: 'web', ttl: 2, policies: [] });
    release();
    expect((await stale)!.ttl).toBe(1);
    slow = false;
    expect((await roles.get('web'))!.ttl).toBe(2);
  });
});
