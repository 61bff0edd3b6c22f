import { createUniformRandom } from './random.js';

describe('createUniformRandom', () => {
  it('rejects draws from the incomplete last block instead of reducing them', () => {
    // n = 3: bytes 255 is at or above the limit 255 and must be redrawn; 254 % 3 = 2.
    const feed = [255, 255, 254, 7];
    const rnd = createUniformRandom((size) => Buffer.from(feed.splice(0, size).concat(Array(Math.max(0, size - feed.length)).fill(0))));
    expect(rnd.index(3)).toBe(2);
    expect(rnd.index(3)).toBe(1);
  });

  it('uses two bytes past 256 and never returns out of range', () => {
    const rnd = createUniformRandom(() => Buffer.from([0xff, 0xff, 0x01, 0x02, ...Array(252).fill(0)]));
    // 65535 >= limit for n = 300 (65536 - 65536 % 300 = 65400), so the next pair 0x0102 = 258 is used.
    expect(rnd.index(300)).toBe(258);
    const real = createUniformRandom();
    for (let i = 0; i < 1000; i++) {
      const x = real.index(7);
      expect(x >= 0 && x < 7 && Number.isInteger(x)).toBe(true);
    }
    expect(() => real.index(0)).toThrow(RangeError);
  });

  it('covers every index', () => {
    const rnd = createUniformRandom();
    const seen = new Set<number>();
    for (let i = 0; i < 2000; i++) seen.add(rnd.index(10));
    expect([...seen].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });
});
