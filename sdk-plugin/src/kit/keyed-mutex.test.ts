import { createKeyedMutex } from './keyed-mutex.js';

describe('keyed mutex', () => {
  it('runs work on one key one at a time, in arrival order, and other keys in parallel', async () => {
    const m = createKeyedMutex();
    const log: string[] = [];
    const step = (tag: string, ms: number) => async () => {
      log.push(`${tag}+`);
      await new Promise((r) => setTimeout(r, ms));
      log.push(`${tag}-`);
      return tag;
    };
    const results = await Promise.all([m.run('a', step('a1', 20)), m.run('a', step('a2', 1)), m.run('b', step('b1', 1))]);
    expect(results).toEqual(['a1', 'a2', 'b1']);
    expect(log.indexOf('a1-')).toBeLessThan(log.indexOf('a2+'));
    expect(log.indexOf('b1-')).toBeLessThan(log.indexOf('a1-'));
  });

  it('releases the key when the work fails', async () => {
    const m = createKeyedMutex();
    await expect(m.run('a', async () => Promise.reject(new Error('x')))).rejects.toThrow('x');
    await expect(m.run('a', async () => 'ok')).resolves.toBe('ok');
  });
});
