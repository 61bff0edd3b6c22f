/**
 * The transit engine's storage (the mount's barrier view):
 *
 *   policy/<name>          a key: settings and every version's material (keys/policy.ts)
 *   config/keys            { disable_upsert }
 *   config/cache           { size } of the key cache (0: unbounded)
 *   import/wrapping-key    the mount's RSA-4096 BYOK wrapping key (PKCS#8 DER, raw bytes)
 *
 * Security invariants:
 * - key material reaches storage only through the mount's storage view, which
 *   the core's barrier encrypts; storage keys hold key names, never secrets;
 * - a rotated, trimmed or deleted key is never served stale from this
 *   process: records live in the SDK's record store, dropped on every write
 *   and on the core's invalidation.
 *
 * The hot path (encrypt, decrypt, sign, hmac of a known key) makes no storage
 * round trip and decodes nothing: the decoded key (`LoadedPolicy`) is built
 * once per cached record (`memo`) and goes with it. Changes to one key run
 * under that key's lock (`locked`); reads never wait for it.
 */
import { createPrivateKey, createPublicKey, generateKeyPair, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { createRecordStore, rawBytesCodec, type Storage } from '@strongroom/sdk-plugin';
import { z } from 'zod';
import { loadPolicy, policyRecord, type LoadedPolicy, type PolicyRecord } from './keys/policy.js';

const generateKeyPairAsync = promisify(generateKeyPair);

export type KeysConfig = z.output<typeof keysConfig>;
const keysConfig = z.object({ disable_upsert: z.boolean().default(false) });

export type TransitStore = ReturnType<typeof createTransitStore>;

export function createTransitStore(storage: Storage) {
  // Unbounded until cache-config says otherwise (Vault's default).
  const records = createRecordStore(storage, { cacheMax: 0 });
  const keys = records.kind('policy/', policyRecord);
  const loaded = keys.memo(loadPolicy);
  const config = records.single('config/keys', keysConfig);
  const cacheConfig = records.single('config/cache', z.object({ size: z.number() }));
  const wrapping = records.single('import/wrapping-key', z.object({ bytes: z.string() }), { codec: rawBytesCodec });
  const wrappingKey = wrapping.memo((w) => createPrivateKey({ key: Buffer.from(w.bytes, 'base64'), format: 'der', type: 'pkcs8' }));

  return {
    records,
    /** The key, decoded; null when it does not exist. */
    get: (name: string): Promise<LoadedPolicy | null> => keys.view(name).then((r) => (r === null ? null : loaded(r))),
    /** The key's record as the caller's own copy, to change under the key's lock and `save`. */
    copy: (name: string): Promise<PolicyRecord | null> => keys.get(name),
    /** Stores `record` (call under the key's lock). */
    async save(record: PolicyRecord): Promise<LoadedPolicy> {
      return loadPolicy(await keys.put(record.name, record));
    },
    remove: (name: string) => keys.delete(name),
    list: async () => (await keys.list()).filter((k) => !k.endsWith('/')),
    /** Where the keys live in storage (a SCAN of keys/ reads it in one call). */
    prefix: keys.prefix,
    /** Serializes changes to one key (create, rotate, configure, trim, delete); encrypt and decrypt never take it. */
    locked: <T>(name: string, fn: () => Promise<T>) => keys.lock(name, fn),
    config: async (): Promise<KeysConfig> => ({ disable_upsert: (await config.view())?.disable_upsert ?? false }),
    setConfig: (c: KeysConfig) => config.put(c),
    /** The configured cache size, applied to the record cache. */
    async cacheSize(): Promise<number> {
      const size = (await cacheConfig.view())?.size ?? 0;
      records.resize(size);
      return size;
    },
    async setCacheSize(size: number): Promise<void> {
      await cacheConfig.put({ size });
      records.resize(size);
    },
    /** The mount's 4096-bit RSA wrapping key for BYOK, generated on first use. */
    async wrappingKey(): Promise<KeyObject> {
      const w =
        (await wrapping.view()) ??
        (await wrapping.update(async (cur) => {
          if (cur) return undefined;
          const { privateKey } = await generateKeyPairAsync('rsa', { modulusLength: 4096 });
          return { bytes: privateKey.export({ type: 'pkcs8', format: 'der' }).toString('base64') };
        }));
      return wrappingKey(w!);
    },
  };
}

export function publicPem(k: KeyObject): string {
  return createPublicKey(k).export({ type: 'spki', format: 'pem' }).toString();
}
