/**
 * Randomness for what a process makes many of per second: the core's envelope nonces, token
 * ids, accessors and lease ids, an SSH engine's certificate serials and nonces. It is drawn
 * from a pool refilled 16 KiB at a time from node:crypto, because one randomBytes call per
 * value cost more than the rest of the value (a lease id on every credential). Each pool byte
 * is handed out once.
 */
import { randomFillSync } from 'node:crypto';

const pool = Buffer.alloc(16 * 1024);
let offset = pool.length;

/** Makes `length` unused bytes available at `offset`. */
function reserve(length: number): void {
  if (offset + length > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
}

/** Writes `length` fresh random bytes (at most the pool's size) into `out` at `at`. */
export function fillRandom(out: Buffer, at: number, length: number): void {
  reserve(length);
  pool.copy(out, at, offset, offset + length);
  offset += length;
}

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `length` fresh random bytes (at most the pool's size), in a buffer of their own. */
export function takeRandom(length: number): Buffer {
  const out = Buffer.allocUnsafe(length);
  fillRandom(out, 0, length);
  return out;
}

/** Uniform base62 string (rejection sampling: bytes >= 248 are dropped, so no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    reserve(1);
    const b = pool[offset++]!;
    if (b < 248) out += BASE62[b % 62];
  }
  return out;
}
