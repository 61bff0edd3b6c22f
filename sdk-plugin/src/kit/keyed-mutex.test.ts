import { createKeyedMutex } from './keyed-mutex.js';

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
