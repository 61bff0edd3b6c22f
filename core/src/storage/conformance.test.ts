/**
 * One conformance suite for every store layer: physical backends, views,
 * fault wrappers and the barrier all promise the same semantics.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createInmemPhysical } from './inmem.js';
import { createLevelPhysical } from './level.js';
import { createPostgresPhysical } from './postgresql.js';
import { postgresUrl } from '../../../test/helpers/databases.js';
import { createView } from './view.js';
import { createFaultyStore } from '@strongroom/sdk-plugin/host';
import { createBarrier } from '../barrier/barrier.js';
import { keyPages, type KeyValueStore } from './keys.js';
import type { Physical } from './physical.js';

interface Subject {
  store: KeyValueStore;
  close(): Promise<void>;
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function level(): Promise<Physical> {
  const dir = mkdtempSync(join(tmpdir(), 'strongroom-conf-'));
  dirs.push(dir);
  return createLevelPhysical({ path: dir });
}

/** A fresh table on the shared test PostgreSQL (scripts/services/services.js), dropped on close. */
async function postgres(): Promise<{ physical: Physical; close(): Promise<void> }> {
  const table = `conformance_${randomBytes(6).toString('hex')}`;
  const p = createPostgresPhysical({ connectionUrl: postgresUrl(), table, haTable: `${table}_ha`, maxParallel: 4 });
  await p.ready;
  return {
    physical: p,
    close: async () => {
      await p.db.raw(`DROP TABLE IF EXISTS "${table}", "${table}_ha"`);
      await p.close();
    },
  };
}

async function unsealedBarrier(physical: Physical, cacheEntries?: number): Promise<KeyValueStore> {
  const b = createBarrier(physical, cacheEntries === undefined ? {} : { cacheEntries });
  const key = randomBytes(32);
  await b.initialize(key);
  await b.unseal(key);
  return b;
}

const subjects: Array<[string, () => Promise<Subject>]> = [
  ['inmem', async () => { const p = createInmemPhysical(); return { store: p, close: () => p.close() }; }],
  ['level', async () => { const p = await level(); return { store: p, close: () => p.close() }; }],
  ['view(inmem)', async () => { const p = createInmemPhysical(); return { store: createView(p, 'logical/abc/'), close: () => p.close() }; }],
  ['view(level)', async () => { const p = await level(); return { store: createView(p, 'namespaces/n1/'), close: () => p.close() }; }],
  ['faulty(inmem)', async () => { const p = createInmemPhysical(); return { store: createFaultyStore(p), close: () => p.close() }; }],
  ['barrier(inmem)', async () => { const p = createInmemPhysical(); return { store: await unsealedBarrier(p), close: () => p.close() }; }],
  ['barrier(inmem, no cache)', async () => { const p = createInmemPhysical(); return { store: await unsealedBarrier(p, 0), close: () => p.close() }; }],
  ['barrier(level)', async () => { const p = await level(); return { store: await unsealedBarrier(p), close: () => p.close() }; }],
  ['postgresql', async () => { const p = await postgres(); return { store: p.physical, close: p.close }; }],
  ['barrier(postgresql)', async () => { const p = await postgres(); return { store: await unsealedBarrier(p.physical), close: p.close }; }],
  ['view(barrier(level))', async () => { const p = await level(); return { store: createView(await unsealedBarrier(p), 'logical/m/'), close: () => p.close() }; }],
];

const b = (s: string) => Buffer.from(s, 'utf8');
const str = (v: Uint8Array | null) => (v === null ? null : Buffer.from(v).toString('utf8'));

async function scanAll(store: KeyValueStore, prefix: string): Promise<Array<[string, string]>> {
  const out: Array<[string, string]> = [];
  for await (const e of store.scan(prefix)) out.push([e.key, Buffer.from(e.value).toString('utf8')]);
  return out;
}

describe.each(subjects)('storage conformance: %s', (_name, make) => {
  let subject: Subject;
  let s: KeyValueStore;
  beforeEach(async () => {
    subject = await make();
    s = subject.store;
  });
  afterEach(() => subject.close());

  it('returns null for a missing key', async () => {
    expect(await s.get('nope')).toBeNull();
  });

  it('round-trips, overwrites and deletes', async () => {
    await s.put('a', b('1'));
    expect(str(await s.get('a'))).toBe('1');
    await s.put('a', b('2'));
    expect(str(await s.get('a'))).toBe('2');
    await s.delete('a');
    expect(await s.get('a')).toBeNull();
    await s.delete('a');
    expect(await s.get('a')).toBeNull();
  });

  it('stores binary and empty values byte for byte', async () => {
    const bin = Buffer.from([0, 255, 0, 1, 2, 0x80, 0]);
    await s.put('bin', bin);
    await s.put('empty', new Uint8Array(0));
    expect(Buffer.from((await s.get('bin')) as Uint8Array).equals(bin)).toBe(true);
    expect((await s.get('empty'))?.length).toBe(0);
    const big = randomBytes(200_000);
    await s.put('big', big);
    expect(Buffer.from((await s.get('big')) as Uint8Array).equals(big)).toBe(true);
  });

  it('does not let callers mutate stored values through buffers', async () => {
    const v = b('original');
    await s.put('k', v);
    v.fill(0);
    const got = (await s.get('k')) as Uint8Array;
    expect(str(got)).toBe('original');
    got.fill(0);
    expect(str(await s.get('k'))).toBe('original');
  });

  it('lists one level, sorted, sub-folders ending in /', async () => {
    for (const k of ['a/b', 'a/c/d', 'a/c/e/f', 'a/d', 'a0', 'a', 'b/x', 'a/.hidden', 'a/c']) await s.put(k, b(k));
    expect(await s.list('a/')).toEqual(['.hidden', 'b', 'c', 'c/', 'd']);
    expect(await s.list('a/c/')).toEqual(['d', 'e/']);
    // The barrier keeps its own keyring under core/.
    expect((await s.list('')).filter((k) => k !== 'core/')).toEqual(['a', 'a/', 'a0', 'b/']);
    expect(await s.list('a')).toEqual(['/', '0']);
    expect(await s.list('zzz/')).toEqual([]);
    expect(await s.list('a/c/e/f/')).toEqual([]);
  });

  it('lists correctly past large sub-trees', async () => {
    const ops = [];
    for (let i = 0; i < 700; i++) ops.push({ type: 'put' as const, key: `big/sub/${String(i).padStart(4, '0')}`, value: b('x') });
    for (let i = 0; i < 300; i++) ops.push({ type: 'put' as const, key: `big/flat${String(i).padStart(4, '0')}`, value: b('x') });
    ops.push({ type: 'put', key: 'big/sub0', value: b('x') }, { type: 'put', key: 'big/zz/1', value: b('x') });
    await s.batch(ops);
    const listed = await s.list('big/');
    expect(listed).toHaveLength(303);
    expect(listed[0]).toBe('flat0000');
    expect(listed.slice(-3)).toEqual(['sub/', 'sub0', 'zz/']);
    expect(await s.list('big/sub/')).toHaveLength(700);
  });

  it('orders unicode keys by code point everywhere', async () => {
    const keys = ['u/\u00e9', 'u/\uff01', 'u/\u{1F600}', 'u/z', 'u/\u4e2d/x'];
    for (const k of keys) await s.put(k, b(k));
    expect(await s.list('u/')).toEqual(['z', '\u00e9', '\u4e2d/', '\uff01', '\u{1F600}']);
    expect((await scanAll(s, 'u/')).map(([k]) => k)).toEqual(['u/z', 'u/\u00e9', 'u/\u4e2d/x', 'u/\uff01', 'u/\u{1F600}']);
    expect(str(await s.get('u/\u{1F600}'))).toBe('u/\u{1F600}');
  });

  it('rejects keys that are not well-formed unicode', async () => {
    await expect(s.put('bad\ud800', b('x'))).rejects.toThrow(/well-formed/);
  });

  it('applies a batch in order', async () => {
    await s.put('gone', b('x'));
    await s.batch([
      { type: 'put', key: 'b1', value: b('1') },
      { type: 'put', key: 'b2', value: b('2') },
      { type: 'delete', key: 'gone' },
      { type: 'put', key: 'b1', value: b('1b') },
      { type: 'put', key: 'tmp', value: b('t') },
      { type: 'delete', key: 'tmp' },
    ]);
    expect(str(await s.get('b1'))).toBe('1b');
    expect(str(await s.get('b2'))).toBe('2');
    expect(await s.get('gone')).toBeNull();
    expect(await s.get('tmp')).toBeNull();
    await s.batch([]);
  });

  it('scans every key below a prefix, sorted, and nothing outside it', async () => {
    for (const k of ['p/3', 'p/1', 'p/2/deep/x', 'p', 'p0', 'q/1', 'p/2']) await s.put(k, b(`v:${k}`));
    expect(await scanAll(s, 'p/')).toEqual([
      ['p/1', 'v:p/1'],
      ['p/2', 'v:p/2'],
      ['p/2/deep/x', 'v:p/2/deep/x'],
      ['p/3', 'v:p/3'],
    ]);
    expect(await scanAll(s, 'nothing/')).toEqual([]);
  });

  it('scans keys alone as scan does, across read-ahead chunks, without values', async () => {
    for (const k of ['p/3', 'p/1', 'p/2/deep/x', 'p', 'p0', 'q/1', 'p/2']) await s.put(k, b(`v:${k}`));
    const keysOf = async (prefix: string): Promise<string[]> => {
      const out: string[] = [];
      for await (const k of s.scanKeys(prefix)) out.push(k);
      return out;
    };
    expect(await keysOf('p/')).toEqual(['p/1', 'p/2', 'p/2/deep/x', 'p/3']);
    expect(await keysOf('nothing/')).toEqual([]);
    // More keys than any backend reads per chunk (level 1024, postgresql 256).
    const many = Array.from({ length: 1500 }, (_, i) => `k/${String(i).padStart(4, '0')}`);
    for (let i = 0; i < many.length; i += 500) {
      await s.batch(many.slice(i, i + 500).map((key) => ({ type: 'put' as const, key, value: b('x') })));
    }
    expect(await keysOf('k/')).toEqual(many);
    expect(await keysOf('k/')).toEqual((await scanAll(s, 'k/')).map(([k]) => k));
    // The same keys a page at a time (the store's own pages or scanKeys grouped); from the
    // empty prefix too, where the barrier keeps its own keys out as scanKeys does.
    const pagesOf = async (prefix: string): Promise<string[]> => {
      const out: string[] = [];
      for await (const page of keyPages(s, prefix)) out.push(...page);
      return out;
    };
    expect(await pagesOf('k/')).toEqual(many);
    expect(await pagesOf('nothing/')).toEqual([]);
    expect(await pagesOf('')).toEqual(await keysOf(''));
  });

  it('scans a window of keys: strictly after prefix + after, at most limit, across chunks', async () => {
    const keys = Array.from({ length: 1300 }, (_, i) => `w/${String(i).padStart(4, '0')}`);
    for (let i = 0; i < keys.length; i += 500) {
      await s.batch(keys.slice(i, i + 500).map((key) => ({ type: 'put' as const, key, value: b('x') })));
    }
    await s.put('w0', b('outside'));
    const windowOf = async (after: string, limit: number): Promise<string[]> => {
      const out: string[] = [];
      for await (const k of s.scanKeys('w/', { after, limit })) out.push(k);
      return out;
    };
    expect(await windowOf('', 3)).toEqual(keys.slice(0, 3));
    expect(await windowOf('0002', 2)).toEqual(keys.slice(3, 5));
    // `after` need not exist; a window past the end is empty; limit 0 is every key after.
    expect(await windowOf('0002x', 1)).toEqual([keys[3]]);
    expect(await windowOf('9999', 10)).toEqual([]);
    expect(await windowOf('0100', 0)).toEqual(keys.slice(101));
    expect(await windowOf('0100', 1100)).toEqual(keys.slice(101, 1201));
  });

  it('keeps every one of many concurrent writes', async () => {
    await Promise.all(Array.from({ length: 200 }, (_, i) => s.put(`c/${i}`, b(String(i)))));
    const got = await Promise.all(Array.from({ length: 200 }, (_, i) => s.get(`c/${i}`)));
    expect(got.map(str)).toEqual(Array.from({ length: 200 }, (_, i) => String(i)));
    expect(await s.list('c/')).toHaveLength(200);
  });

  it('reads its own writes when a read and writes interleave', async () => {
    await s.put('race', b('old'));
    await s.get('race');
    const read = s.get('race');
    const write = s.put('race', b('new'));
    await Promise.all([read, write]);
    expect(str(await s.get('race'))).toBe('new');
    await s.delete('race');
    expect(await s.get('race')).toBeNull();
  });
});
