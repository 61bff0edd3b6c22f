import { createReadCache } from './read-cache.js';

const deferred = <T>() => {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
};

describe('createReadCache', () => {
  it('serves a loaded value from memory, frozen, and remembers a miss apart', async () => {
    const c = createReadCache<{ n: number; list: string[] }>({ max: 10 });
    let loads = 0;
    const load = async () => (loads++, { n: 1, list: ['a'] });
    const first = await c.get('k', load);
    expect(await c.get('k', load)).toBe(first);
    expect(loads).toBe(1);
    expect(c.peek('k')).toBe(first);
    expect(c.peek('other')).toBeUndefined();
    expect(Object.isFrozen(first) && Object.isFrozen(first?.list)).toBe(true);

    let misses = 0;
    const none = async () => (misses++, null);
    await c.get('gone', none);
    expect(await c.get('gone', none)).toBeNull();
    expect(misses).toBe(1);
    expect(c.size()).toBe(1);
  });

  it('forgets a miss when the key is written or dropped, and keeps few misses without evicting values', async () => {
    const c = createReadCache<{ v: string }>({ max: 2 });
    let stored: { v: string } | null = null;
    const load = async () => stored;
    expect(await c.get('k', load)).toBeNull();
    await c.write('k', async () => {
      stored = { v: 'new' };
    });
    expect(await c.get('k', load)).toEqual({ v: 'new' });
    stored = null;
    c.drop('k');
    expect(await c.get('k', load)).toBeNull();
    stored = { v: 'elsewhere' };
    c.drop('k'); // the core's invalidate: storage changed elsewhere
    expect(await c.get('k', load)).toEqual({ v: 'elsewhere' });

    // A miss read while the key was written is not remembered.
    const slow = deferred<null>();
    const inFlight = c.get('late', () => slow.promise);
    await c.write('late', async () => undefined);
    slow.resolve(null);
    await inFlight;
    expect(await c.get('late', async () => ({ v: 'written' }))).toEqual({ v: 'written' });

    // Thousands of unknown keys neither grow memory without bound nor evict a cached value.
    const keep = await c.get('kept', async () => ({ v: 'kept' }));
    let guessLoads = 0;
    for (let i = 0; i < 5000; i++) await c.get(`guess-${i}`, async () => (guessLoads++, null));
    expect(guessLoads).toBe(5000);
    expect(c.peek('kept')).toBe(keep);
    await c.get('guess-0', async () => (guessLoads++, null));
    expect(guessLoads).toBe(5001);
  });

  it('drops a key before and after each write of it', async () => {
    const c = createReadCache<{ v: string }>({ max: 10 });
    let stored = { v: 'old' };
    await c.get('k', async () => stored);
    await c.write('k', async () => {
      stored = { v: 'new' };
      // A read during the write does not serve the old value.
      expect(await c.get('k', async () => stored)).toEqual({ v: 'new' });
    });
    expect(await c.get('k', async () => stored)).toEqual({ v: 'new' });
    c.drop('k');
    stored = { v: 'dropped' };
    expect(await c.get('k', async () => stored)).toEqual({ v: 'dropped' });
  });

  it('does not keep a value read while a write or drop happened', async () => {
    const c = createReadCache<{ v: string }>({ max: 10 });
    const slow = deferred<{ v: string }>();
    const inFlight = c.get('k', () => slow.promise);
    await c.write('k', async () => undefined);
    slow.resolve({ v: 'stale' });
    expect(await inFlight).toEqual({ v: 'stale' });
    expect(await c.get('k', async () => ({ v: 'fresh' }))).toEqual({ v: 'fresh' });

    const slow2 = deferred<{ v: string }>();
    const inFlight2 = c.get('other', () => slow2.promise);
    c.clear();
    slow2.resolve({ v: 'stale' });
    await inFlight2;
    expect(await c.get('other', async () => ({ v: 'fresh' }))).toEqual({ v: 'fresh' });

    // Only the key written matters: a write elsewhere does not cost this read its fill.
    const slow3 = deferred<{ v: string }>();
    const inFlight3 = c.get('third', () => slow3.promise);
    c.drop('unrelated');
    slow3.resolve({ v: 'current' });
    await inFlight3;
    expect(await c.get('third', async () => ({ v: 'reloaded' }))).toEqual({ v: 'current' });
  });

  it('copies nothing and freezes nothing when asked not to, and hands every value leaving the cache to onEvict', async () => {
    const evicted: string[] = [];
    const c = createReadCache<Buffer>({ max: 1, freeze: false, rememberMisses: false, onEvict: (b) => (evicted.push(b.toString()), b.fill(0)) });
    const a = await c.get('a', async () => Buffer.from('a'));
    expect(Object.isFrozen(a)).toBe(false);
    await c.get('b', async () => Buffer.from('b'));
    expect(evicted).toEqual(['a']);
    expect(a?.every((x) => x === 0)).toBe(true);
    c.drop('b');
    expect(evicted).toEqual(['a', 'b']);
    let loads = 0;
    await c.get('gone', async () => (loads++, null));
    await c.get('gone', async () => (loads++, null));
    expect(loads).toBe(2);
    await c.get('c', async () => Buffer.from('c'));
    c.clear();
    expect(evicted).toEqual(['a', 'b', 'c']);
  });

  it('keeps only what `keep` allows', async () => {
    const c = createReadCache<{ uses: number }>({ max: 10, keep: (e) => e.uses === 0 });
    await c.get('limited', async () => ({ uses: 3 }));
    await c.get('unlimited', async () => ({ uses: 0 }));
    expect(await c.get('limited', async () => ({ uses: 2 }))).toEqual({ uses: 2 });
    expect(await c.get('unlimited', async () => ({ uses: 9 }))).toEqual({ uses: 0 });
  });

  it('evicts the least recently used entry beyond max', async () => {
    const c = createReadCache<{ k: string }>({ max: 2 });
    await c.get('a', async () => ({ k: 'a' }));
    await c.get('b', async () => ({ k: 'b' }));
    await c.get('a', async () => ({ k: 'reloaded' })); // a is now the most recent
    await c.get('c', async () => ({ k: 'c' }));
    expect(c.size()).toBe(2);
    expect(await c.get('a', async () => ({ k: 'reloaded' }))).toEqual({ k: 'a' });
    expect(await c.get('b', async () => ({ k: 'reloaded' }))).toEqual({ k: 'reloaded' });
  });
});
