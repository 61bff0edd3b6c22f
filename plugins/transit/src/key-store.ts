/**
 * One mount's keys, cached decrypted in this process so the hot path
 * (encrypt, decrypt, sign, hmac of a known key) does no storage read.
 *
 * Security invariants:
 * - the cache is dropped per key on every write by this process and on
 *   `invalidate(storageKey)` from the core, so a rotated, trimmed or deleted
 *   key is never served stale from this process;
 * - key material reaches storage only through the mount's storage view, which
 *   the core's barrier encrypts; storage keys hold key names, never secrets.
 */
import { generateKeyPair, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { createKeyedMutex, type Storage } from '@strongroom/sdk-plugin';
import { decodePolicy, encodePolicy, loadPolicy, type LoadedPolicy, type PolicyRecord } from './keys/policy.js';

const generateKeyPairAsync = promisify(generateKeyPair);

export const POLICY_PREFIX = 'policy/';
export const CONFIG_KEYS = 'config/keys';
export const CONFIG_CACHE = 'config/cache';
export const WRAPPING_KEY = 'import/wrapping-key';

export interface KeysConfig {
  disable_upsert: boolean;
}

export interface KeyStore {
  /** The cached key, or null when it does not exist. */
  get(name: string): Promise<LoadedPolicy | null>;
  /** Stores `record` and caches it. */
  save(record: PolicyRecord): Promise<LoadedPolicy>;
  remove(name: string): Promise<void>;
  list(): Promise<string[]>;
  /** Serializes read-modify-write sequences on one key name. */
  locked<T>(name: string, fn: () => Promise<T>): Promise<T>;
  config(): Promise<KeysConfig>;
  setConfig(c: KeysConfig): Promise<void>;
  cacheSize(): Promise<number>;
  setCacheSize(n: number): Promise<void>;
  /** The mount's 4096-bit RSA wrapping key for BYOK, generated on first use. */
  wrappingKey(): Promise<KeyObject>;
  invalidate(storageKey: string): void;
  /** Drops everything cached (cleanup). */
  clear(): void;
}

export function createKeyStore(deps: { storage: Pick<Storage, 'get' | 'put' | 'delete' | 'list'> }): KeyStore {
  const { storage } = deps;
  const cache = new Map<string, Promise<LoadedPolicy | null>>();
  let config: Promise<KeysConfig> | null = null;
  let wrapping: Promise<KeyObject> | null = null;
  let cacheLimit = 0;
  const mutex = createKeyedMutex();

  const load = async (name: string): Promise<LoadedPolicy | null> => {
    const raw = await storage.get(POLICY_PREFIX + name);
    return raw === null ? null : loadPolicy(decodePolicy(raw));
  };

  const remember = (name: string, p: Promise<LoadedPolicy | null>) => {
    // A cache limit of 0 means unbounded; otherwise evict the oldest entry (insertion order).
    if (cacheLimit > 0 && !cache.has(name) && cache.size >= cacheLimit) {
      const oldest = cache.keys().next();
      if (!oldest.done) cache.delete(oldest.value);
    }
    cache.set(name, p);
    // A failed read must not stick in the cache.
    p.catch(() => {
      if (cache.get(name) === p) cache.delete(name);
    });
  };

  return {
    get(name) {
      const hit = cache.get(name);
      if (hit) return hit;
      const p = load(name);
      remember(name, p);
      return p;
    },
    async save(record) {
      cache.delete(record.name);
      await storage.put(POLICY_PREFIX + record.name, encodePolicy(record));
      const loaded = loadPolicy(record);
      remember(record.name, Promise.resolve(loaded));
      return loaded;
    },
    async remove(name) {
      cache.delete(name);
      await storage.delete(POLICY_PREFIX + name);
      cache.delete(name);
    },
    async list() {
      return (await storage.list(POLICY_PREFIX)).filter((k) => !k.endsWith('/'));
    },
    locked: (name, fn) => mutex.run(name, fn),
    config() {
      config ??= (async () => {
        const raw = await storage.get(CONFIG_KEYS);
        const c = raw === null ? {} : (JSON.parse(Buffer.from(raw).toString('utf8')) as Partial<KeysConfig>);
        return { disable_upsert: c.disable_upsert === true };
      })();
      config.catch(() => (config = null));
      return config;
    },
    async setConfig(c) {
      config = null;
      await storage.put(CONFIG_KEYS, Buffer.from(JSON.stringify(c)));
      config = Promise.resolve({ ...c });
    },
    async cacheSize() {
      const raw = await storage.get(CONFIG_CACHE);
      cacheLimit = raw === null ? 0 : (JSON.parse(Buffer.from(raw).toString('utf8')) as { size: number }).size;
      return cacheLimit;
    },
    async setCacheSize(n) {
      await storage.put(CONFIG_CACHE, Buffer.from(JSON.stringify({ size: n })));
      cacheLimit = n;
      cache.clear();
    },
    wrappingKey() {
      wrapping ??= mutex.run(WRAPPING_KEY, async () => {
        const raw = await storage.get(WRAPPING_KEY);
        if (raw !== null) return createPrivateKey({ key: Buffer.from(raw), format: 'der', type: 'pkcs8' });
        const { privateKey } = await generateKeyPairAsync('rsa', { modulusLength: 4096 });
        await storage.put(WRAPPING_KEY, privateKey.export({ type: 'pkcs8', format: 'der' }));
        return privateKey;
      });
      wrapping.catch(() => (wrapping = null));
      return wrapping;
    },
    invalidate(key) {
      if (key.startsWith(POLICY_PREFIX)) cache.delete(key.slice(POLICY_PREFIX.length));
      else if (key === CONFIG_KEYS) config = null;
      else if (key === WRAPPING_KEY) wrapping = null;
      else if (key === CONFIG_CACHE) cache.clear();
    },
    clear() {
      cache.clear();
      config = null;
      wrapping = null;
    },
  };
}

export function publicPem(k: KeyObject): string {
  return createPublicKey(k).export({ type: 'spki', format: 'pem' }).toString();
}
