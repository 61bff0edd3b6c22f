import { randomBytes } from 'node:crypto';
import { combine, split } from './shamir.js';

/** Every k-subset of indices 0..n-1. */
function subsets(n: number, k: number): number[][] {
  const out: number[][] = [];
  const rec = (start: number, acc: number[]) => {
    if (acc.length === k) return void out.push([...acc]);
    for (let i = start; i < n; i++) rec(i + 1, [...acc, i]);
  };
  rec(0, []);
  return out;
}

describe('shamir', () => {
  it('round-trips with every threshold-sized subset and every larger one', () => {
    const secret = randomBytes(32);
    const shares = split(secret, 5, 3);
    expect(shares).toHaveLength(5);
    for (const s of shares) expect(s).toHaveLength(33);
    for (const k of [3, 4, 5]) {
      for (const idx of subsets(5, k)) {
        expect(combine(idx.map((i) => shares[i] as Buffer)).equals(secret)).toBe(true);
      }
    }
  });

  it('threshold-1 shares give a different value than the secret', () => {
    const secret = randomBytes(32);
    const shares = split(secret, 5, 3);
    for (const idx of subsets(5, 2)) {
      expect(combine(idx.map((i) => shares[i] as Buffer)).equals(secret)).toBe(false);
    }
  });

  it('uses distinct non-zero x-coordinates', () => {
    const shares = split(randomBytes(16), 255, 2);
    const xs = new Set(shares.map((s) => s[s.length - 1]));
    expect(xs.size).toBe(255);
    expect(xs.has(0)).toBe(false);
  });

  it('supports threshold 1 (any single share is the secret plus its x)', () => {
    const secret = randomBytes(32);
    const [only] = split(secret, 1, 1);
    expect(combine([only as Buffer]).equals(secret)).toBe(true);
    const many = split(secret, 3, 1);
    for (const s of many) expect(combine([s]).equals(secret)).toBe(true);
  });

  it('round-trips a large threshold', () => {
    const secret = randomBytes(32);
    const shares = split(secret, 255, 255);
    expect(combine(shares.reverse()).equals(secret)).toBe(true);
  });

  it('varies shares between splits of the same secret', () => {
    const secret = randomBytes(32);
    const a = split(secret, 3, 2).map((s) => s.subarray(0, 32).toString('hex'));
    const b = split(secret, 3, 2).map((s) => s.subarray(0, 32).toString('hex'));
    expect(a).not.toEqual(b);
  });

  it('rejects invalid parameters', () => {
    const s = randomBytes(32);
    expect(() => split(s, 0, 1)).toThrow(/parts/);
    expect(() => split(s, 256, 2)).toThrow(/parts/);
    expect(() => split(s, 3, 4)).toThrow(/threshold/);
    expect(() => split(s, 3, 0)).toThrow(/threshold/);
    expect(() => split(Buffer.alloc(0), 3, 2)).toThrow(/empty/);
  });

  it('rejects duplicate, mismatched and malformed shares', () => {
    const shares = split(randomBytes(32), 3, 2);
    const [a, b] = shares as [Buffer, Buffer];
    expect(() => combine([a, Buffer.from(a)])).toThrow(/duplicate/);
    expect(() => combine([a, b.subarray(1)])).toThrow(/same length/);
    const zeroX = Buffer.from(b);
    zeroX[zeroX.length - 1] = 0;
    expect(() => combine([a, zeroX])).toThrow(/x-coordinate 0/);
    expect(() => combine([])).toThrow();
    expect(() => combine([Buffer.from([1])])).toThrow(/2 bytes/);
  });
});
