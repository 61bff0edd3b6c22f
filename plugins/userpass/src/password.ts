/**
 * Password hashing. Security invariants guarded here:
 * - A password is kept only as an scrypt hash (node:crypto) under a fresh
 *   random salt per hash; the cost parameters are stored beside it, so they
 *   can be raised later without invalidating older hashes.
 * - Checking compares the derived key to the stored one in constant time.
 * - `checkMissing` derives against a dummy hash with the current parameters,
 *   so a login for a user that does not exist costs what a wrong password
 *   costs, and answers the same.
 * - Neither a password nor a hash leaves this module in a message.
 */
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

export const passwordHash = z.object({
  algorithm: z.literal('scrypt'),
  /** CPU/memory cost (a power of two), block size, parallelism. */
  n: z.number().int().positive(),
  r: z.number().int().positive(),
  p: z.number().int().positive(),
  /** base64 */
  salt: z.string(),
  /** base64 */
  hash: z.string(),
});
export type PasswordHash = z.output<typeof passwordHash>;

export interface ScryptParams {
  n: number;
  r: number;
  p: number;
}

/**
 * 2^15 x 8 x 1: 32 MiB and tens of milliseconds per derivation on a server
 * core (above the "interactive login" cost scrypt's author suggests). Each
 * derivation runs on libuv's pool, never on the event loop.
 */
const DEFAULT_PARAMS: ScryptParams = { n: 2 ** 15, r: 8, p: 1 };
const KEY_LENGTH = 32;
const SALT_LENGTH = 16;

function derive(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  // scrypt needs 128 * n * r bytes (plus a little): room for that, and no more.
  const maxmem = 128 * params.n * params.r * params.p + 8 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { N: params.n, r: params.r, p: params.p, maxmem }, (err, key) => (err ? reject(new Error('password hashing failed')) : resolve(key)));
  });
}

export interface PasswordHasher {
  hash(password: string): Promise<PasswordHash>;
  /** Whether `password` is the one `stored` was made from (constant-time comparison). */
  check(password: string, stored: PasswordHash): Promise<boolean>;
  /** Spends the time of a check and answers false: the login of a user that does not exist. */
  checkMissing(password: string): Promise<false>;
}

export function createPasswordHasher(params: ScryptParams = DEFAULT_PARAMS): PasswordHasher {
  let dummy: Promise<PasswordHash> | null = null;
  const hash = async (password: string): Promise<PasswordHash> => {
    const salt = randomBytes(SALT_LENGTH);
    const key = await derive(password, salt, params);
    return { algorithm: 'scrypt', ...params, salt: salt.toString('base64'), hash: key.toString('base64') };
  };
  const check = async (password: string, stored: PasswordHash): Promise<boolean> => {
    const want = Buffer.from(stored.hash, 'base64');
    const got = await derive(password, Buffer.from(stored.salt, 'base64'), stored);
    return got.length === want.length && timingSafeEqual(got, want);
  };
  return {
    hash,
    check,
    async checkMissing(password) {
      // A hash of a random password nobody knows, made once per process with the current parameters.
      dummy ??= hash(randomBytes(24).toString('base64'));
      await check(password, await dummy);
      return false;
    },
  };
}
