import { paginate } from './paginate.js';
import { createKeyedMutex } from './keyed-mutex.js';

describe('paginate', () => {
  const keys = ['c', 'a', 'b/', 'd'];
  it('sorts and returns everything by default (limit 0)', () => {
    expect(paginate(keys)).toEqual(['a', 'b/', 'c', 'd']);
  });
  it('starts strictly after `after`, which need not exist', () => {
    expect(paginate(keys, 'b/')).toEqual(['c', 'd']);
    expect(paginate(keys, 'bb')).toEqual(['c', 'd']);
    expect(paginate(keys, 'z')).toEqual([]);
  });
  it('limits', () => {
    expect(paginate(keys, '', 2)).toEqual(['a', 'b/']);
    expect(paginate(keys, 'a', 2)).toEqual(['b/', 'c']);
  });
});

describe('createKeyedMutex', () => {
  it('serializes work on one key and not across keys', async () => {
    const m = createKeyedMutex();
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const first = m.run('k', async () => {
      order.push('first-start');
      await gate;
      order.push('first-end');
    });
    const second = m.run('k', async () => {
      order.push('second');
    });
    const other = m.run('other', async () => {
      order.push('other');
    });
    await other;
    expect(order).toEqual(['first-start', 'other']);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(['first-start', 'other', 'first-end', 'second']);
  });
  it('releases the lock when the work throws', async () => {
    const m = createKeyedMutex();
    await expect(m.run('k', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(m.run('k', async () => 7)).resolves.toBe(7);
  });
});
