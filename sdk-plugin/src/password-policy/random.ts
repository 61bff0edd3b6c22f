/**
 * Uniform random indexes from a CSPRNG, without modulo bias: a draw that falls
 * in the incomplete last block of the byte range is thrown away and redrawn
 * (rejection sampling), so every index in [0, n) is exactly equally likely.
 * Each generator buffers a little randomness; create one per password so no
 * unused bytes outlive it.
 */
import { randomBytes as cryptoRandomBytes } from 'node:crypto';

export type RandomBytes = (size: number) => Buffer;

export interface UniformRandom {
  /** A uniformly distributed integer in [0, n), 1 <= n <= 2^32. */
  index(n: number): number;
}

const CHUNK = 256;

export function createUniformRandom(randomBytes: RandomBytes = cryptoRandomBytes): UniformRandom {
  let buf: Buffer = Buffer.alloc(0);
  let offset = 0;
  const take = (width: number): Buffer => {
    if (offset + width > buf.length) {
      buf = randomBytes(Math.max(CHUNK, width));
      offset = 0;
    }
    const out = buf.subarray(offset, offset + width);
    offset += width;
    return out;
  };
  return {
    index(n) {
      if (!Number.isInteger(n) || n < 1 || n > 2 ** 32) throw new RangeError(`index range must be an integer in [1, 2^32], got ${n}`);
      if (n === 1) return 0;
      const width = n <= 0x100 ? 1 : n <= 0x10000 ? 2 : 4;
      const range = 2 ** (8 * width);
      // The largest multiple of n that fits: values at or above it would favour the low indexes.
      const limit = range - (range % n);
      for (;;) {
        const b = take(width);
        const x = width === 1 ? (b[0] as number) : width === 2 ? b.readUInt16BE(0) : b.readUInt32BE(0);
        if (x < limit) return x % n;
      }
    },
  };
}
