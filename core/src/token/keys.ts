/**
 * The token store's two keys, kept behind the barrier under one entry: the
 * HMAC key (token keys, accessor index; also the root of the HA forwarding
 * key) and the key that seals batch tokens. Made at init, read at each unseal.
 */
import { randomBytes } from 'node:crypto';
import { BarrierIntegrityError, type Barrier } from '../barrier/barrier.js';

const TOKEN_KEYS_PATH = 'core/token-keys';

export interface TokenKeys {
  hmacKey: Buffer;
  batchKey: Buffer;
}

/** The keys, made on first use. */
export async function tokenKeys(store: Pick<Barrier, 'get' | 'put'>): Promise<TokenKeys> {
  const raw = await store.get(TOKEN_KEYS_PATH);
  if (raw) {
    const b = Buffer.from(raw);
    return { hmacKey: b.subarray(0, 32), batchKey: b.subarray(32, 64) };
  }
  const fresh = randomBytes(64);
  await store.put(TOKEN_KEYS_PATH, fresh);
  return { hmacKey: fresh.subarray(0, 32), batchKey: fresh.subarray(32, 64) };
}

/**
 * A standby's read of the HMAC key, never making it: null until an active node
 * has made it. The active node may have rotated the keyring to a term this
 * standby does not know yet: then the keyring is read again, once.
 */
export async function storedHmacKey(barrier: Pick<Barrier, 'get' | 'refresh'>): Promise<Buffer | null> {
  const raw = await barrier.get(TOKEN_KEYS_PATH).catch(async (err: unknown) => {
    if (!(err instanceof BarrierIntegrityError)) throw err;
    await barrier.refresh();
    return barrier.get(TOKEN_KEYS_PATH);
  });
  return raw ? Buffer.from(raw).subarray(0, 32) : null;
}
