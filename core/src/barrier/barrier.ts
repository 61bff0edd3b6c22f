/**
 * The security barrier: everything the core and the plugins store goes through
 * here and reaches physical storage encrypted.
 *
 * What is encrypted: every value, AES-256-GCM under the keyring's term key,
 * with a fresh 96-bit nonce and the storage path as associated data (see
 * envelope.ts). What is NOT encrypted: keys (paths), `core/seal-config` and
 * `core/recovery-config`, which hold only share counts and thresholds, and an
 * auto seal's records under `core/seal/`, which are encrypted by the seal's
 * own key instead. So no secret may appear in a key.
 *
 * Key hierarchy: the unseal key (rebuilt from Shamir shares and never stored,
 * or, with a static seal, stored wrapped by the operator's seal key)
 * encrypts the root key at `core/root-key`; the root key encrypts the keyring
 * at `core/keyring`; keyring terms encrypt the data. Sealed means no key in
 * memory: seal() overwrites every key buffer, and the decrypted-entry cache,
 * with zeros. Keyring plaintext is binary (never a JS string, which could not
 * be wiped).
 */
import { randomFillSync } from 'node:crypto';
import { StrongroomError, badRequest, createReadCache } from '@strongroom/sdk-plugin/host';
import type { PhysicalEntry, PhysicalOp } from '../storage/physical.js';
import { keyPages, type KeyValueStore } from '../storage/keys.js';
import { decrypt, encrypt, envelopeTerm } from './envelope.js';

export const KEYRING_PATH = 'core/keyring';
export const ROOT_KEY_PATH = 'core/root-key';
export const SEAL_CONFIG_PATH = 'core/seal-config';
/** An auto seal's records (seal/static-seal.ts): the unseal key and the recovery key, each wrapped by the seal's key. */
export const SEAL_STORED_KEY_PATH = 'core/seal/stored-key';
export const RECOVERY_KEY_PATH = 'core/seal/recovery-key';
/** Recovery key shares and threshold (an auto seal), plain like the seal config. */
export const RECOVERY_CONFIG_PATH = 'core/recovery-config';
/** Stored outside the barrier's encryption (or under its own envelopes): refused by the secure store. */
const RESERVED_KEYS: ReadonlySet<string> = new Set([KEYRING_PATH, ROOT_KEY_PATH, SEAL_CONFIG_PATH, SEAL_STORED_KEY_PATH, RECOVERY_KEY_PATH, RECOVERY_CONFIG_PATH]);
/** Term number of the envelopes around the root key and the keyring (not a data term). */
const META_TERM = 0;
export const KEY_BYTES = 32;

export class BarrierSealedError extends StrongroomError {
  constructor() {
    super('unavailable', 'Vault is sealed');
    this.name = 'BarrierSealedError';
  }
}

/** A stored value that fails authentication: tampered, moved to another key, or of an unknown term. */
export class BarrierIntegrityError extends StrongroomError {
  /** For the log (keys are not secret); the user-facing message stays generic. */
  readonly key: string;
  constructor(key: string) {
    super('internal', 'a storage entry failed its integrity check');
    this.name = 'BarrierIntegrityError';
    this.key = key;
  }
}

export interface KeyStatus {
  term: number;
  installTime: Date;
  /** Encryptions under the active term since this process unsealed. */
  encryptions: number;
}

export interface Barrier extends KeyValueStore {
  initialized(): Promise<boolean>;
  /** Creates the root key and keyring term 1. `extraOps` are written in the same atomic batch (the seal config). Leaves the barrier sealed. */
  initialize(unsealKey: Uint8Array, opts?: { extraOps?: PhysicalOp[] }): Promise<void>;
  /** Throws a 400 'invalid key' error, and keeps no state, when the key does not decrypt the root key. */
  unseal(unsealKey: Uint8Array): Promise<void>;
  seal(): void;
  readonly sealed: boolean;
  rotate(): Promise<{ term: number }>;
  keyStatus(): KeyStatus;
  /** Whether `unsealKey` decrypts the stored root key (generate-root and rekey check the operators' shares with it). */
  verifyUnsealKey(unsealKey: Uint8Array): Promise<boolean>;
  /**
   * Rekey: the root key (unchanged, so no entry is re-encrypted) is stored
   * again under `newUnsealKey`, with `extraOps` (the new seal config) in the
   * same atomic batch. Needs the barrier unsealed; the old key stops working.
   */
  rekey(newUnsealKey: Uint8Array, opts?: { extraOps?: PhysicalOp[] }): Promise<void>;
  /**
   * Re-reads the keyring (another node may have rotated it) and drops every
   * cached entry: what a standby does before it becomes active on shared storage.
   */
  refresh(): Promise<void>;
  /**
   * Whether a stored keyring envelope (from a snapshot) opens with this
   * barrier's root key: the snapshot is of this barrier, not another one's.
   */
  opensKeyring(envelope: Uint8Array): boolean;
  /** Drops the cached entry of a key another node wrote (a standby following the change feed). */
  invalidate(key: string): void;
}

export interface BarrierOptions {
  /** Decrypted entries kept hot (default 4096). 0 disables the cache. */
  cacheEntries?: number;
  /** Entries larger than this are never cached (default 32 KiB). */
  cacheMaxValueBytes?: number;
  now?: () => Date;
}

interface TermKey {
  term: number;
  key: Buffer;
  installTime: Date;
  encryptions: number;
}

interface Keyring {
  rootKey: Buffer;
  terms: Map<number, TermKey>;
  active: TermKey;
}

// Keyring plaintext: [format 1][active term u32][count u16] then per term
// [term u32][install time ms u64][key 32].
const KEYRING_FORMAT = 1;
const KEYRING_ENTRY = 4 + 8 + KEY_BYTES;

function freshKey(): Buffer {
  const k = Buffer.alloc(KEY_BYTES);
  randomFillSync(k);
  return k;
}

function encodeKeyring(terms: Iterable<TermKey>, active: number): Buffer {
  const list = [...terms];
  const buf = Buffer.alloc(7 + list.length * KEYRING_ENTRY);
  buf[0] = KEYRING_FORMAT;
  buf.writeUInt32BE(active, 1);
  buf.writeUInt16BE(list.length, 5);
  list.forEach((t, i) => {
    const at = 7 + i * KEYRING_ENTRY;
    buf.writeUInt32BE(t.term, at);
    buf.writeBigUInt64BE(BigInt(t.installTime.getTime()), at + 4);
    t.key.copy(buf, at + 12);
  });
  return buf;
}

function decodeKeyring(buf: Buffer, rootKey: Buffer): Keyring {
  const count = buf.length >= 7 ? buf.readUInt16BE(5) : -1;
  if (buf[0] !== KEYRING_FORMAT || buf.length !== 7 + count * KEYRING_ENTRY) {
    throw new StrongroomError('internal', 'the stored keyring is malformed');
  }
  const activeTerm = buf.readUInt32BE(1);
  const terms = new Map<number, TermKey>();
  for (let i = 0; i < count; i++) {
    const at = 7 + i * KEYRING_ENTRY;
    const key = Buffer.alloc(KEY_BYTES);
    buf.copy(key, 0, at + 12, at + 12 + KEY_BYTES);
    const term = buf.readUInt32BE(at);
    terms.set(term, { term, key, installTime: new Date(Number(buf.readBigUInt64BE(at + 4))), encryptions: 0 });
  }
  const active = terms.get(activeTerm);
  if (!active) throw new StrongroomError('internal', 'the stored keyring has no active term');
  return { rootKey, terms, active };
}

function wipeKeyring(k: Keyring): void {
  k.rootKey.fill(0);
  for (const t of k.terms.values()) t.key.fill(0);
  k.terms.clear();
}

function assertKeyLength(unsealKey: Uint8Array): Buffer {
  if (unsealKey.length !== KEY_BYTES) throw badRequest(`the unseal key must be ${KEY_BYTES} bytes`);
  return Buffer.from(unsealKey.buffer, unsealKey.byteOffset, unsealKey.byteLength);
}

export function createBarrier(physical: KeyValueStore, opts: BarrierOptions = {}): Barrier {
  const cacheLimit = opts.cacheEntries ?? 4096;
  const cacheMaxValue = opts.cacheMaxValueBytes ?? 32 * 1024;
  const now = opts.now ?? (() => new Date());

  let keyring: Keyring | null = null;
  let rotating: Promise<unknown> = Promise.resolve();

  // Decrypted values, least recently used out first, wiped as they leave. The read cache's
  // guard keeps a read that fetched the old envelope before a write landed from re-filling it.
  const cache = createReadCache<Buffer>({
    max: cacheLimit,
    freeze: false,
    rememberMisses: false,
    copy: (v) => Buffer.from(v),
    onEvict: (v) => v.fill(0),
  });

  const unsealed = (): Keyring => {
    if (keyring === null) throw new BarrierSealedError();
    return keyring;
  };

  const assertWritable = (key: string): void => {
    if (RESERVED_KEYS.has(key)) throw new StrongroomError('internal', `${key} is reserved for the barrier`);
  };

  const cacheable = (key: string, size: number): boolean =>
    cacheLimit > 0 && size <= cacheMaxValue && !key.startsWith(KEYRING_PATH) && !RESERVED_KEYS.has(key);

  const invalidate = (key: string): void => cache.drop(key);
  const clearCache = (): void => cache.clear();

  const open = (kr: Keyring, key: string, envelope: Uint8Array): Buffer => {
    const t = kr.terms.get(envelopeTerm(envelope));
    const pt = t ? decrypt(t.key, key, envelope) : null;
    if (pt === null) throw new BarrierIntegrityError(key);
    return pt;
  };

  const sealValue = (kr: Keyring, key: string, value: Uint8Array): Buffer => {
    const t = kr.active;
    t.encryptions++;
    return encrypt(t.key, t.term, key, value);
  };

  const keyringOp = (rootKey: Buffer, terms: Iterable<TermKey>, active: number): PhysicalOp => {
    const plain = encodeKeyring(terms, active);
    try {
      return { type: 'put', key: KEYRING_PATH, value: encrypt(rootKey, META_TERM, KEYRING_PATH, plain) };
    } finally {
      plain.fill(0);
    }
  };

  const barrier: Barrier = {
    get sealed() {
      return keyring === null;
    },

    async initialized() {
      const [root, ring] = await Promise.all([physical.get(ROOT_KEY_PATH), physical.get(KEYRING_PATH)]);
      return root !== null || ring !== null;
    },

    async initialize(unsealKey, initOpts = {}) {
      const kek = assertKeyLength(unsealKey);
      if (await barrier.initialized()) throw badRequest('already initialized');
      const rootKey = freshKey();
      const term1: TermKey = { term: 1, key: freshKey(), installTime: now(), encryptions: 0 };
      try {
        const rootOp: PhysicalOp = { type: 'put', key: ROOT_KEY_PATH, value: encrypt(kek, META_TERM, ROOT_KEY_PATH, rootKey) };
        await physical.batch([rootOp, keyringOp(rootKey, [term1], 1), ...(initOpts.extraOps ?? [])]);
      } finally {
        rootKey.fill(0);
        term1.key.fill(0);
      }
    },

    async unseal(unsealKey) {
      const kek = assertKeyLength(unsealKey);
      if (keyring !== null) return;
      const [rootEnv, ringEnv] = await Promise.all([physical.get(ROOT_KEY_PATH), physical.get(KEYRING_PATH)]);
      if (rootEnv === null || ringEnv === null) throw badRequest('not initialized');
      const rootKey = envelopeTerm(rootEnv) === META_TERM ? decrypt(kek, ROOT_KEY_PATH, rootEnv) : null;
      if (rootKey === null || rootKey.length !== KEY_BYTES) {
        rootKey?.fill(0);
        throw badRequest('invalid key: it does not decrypt the root key');
      }
      const plain = envelopeTerm(ringEnv) === META_TERM ? decrypt(rootKey, KEYRING_PATH, ringEnv) : null;
      if (plain === null) {
        rootKey.fill(0);
        throw new BarrierIntegrityError(KEYRING_PATH);
      }
      try {
        const kr = decodeKeyring(plain, rootKey);
        // A concurrent unseal may have finished while we read storage.
        if (keyring === null) keyring = kr;
        else wipeKeyring(kr);
      } catch (err) {
        rootKey.fill(0);
        throw err;
      } finally {
        plain.fill(0);
      }
    },

    seal() {
      const kr = keyring;
      keyring = null;
      clearCache();
      if (kr) wipeKeyring(kr);
    },

    rotate() {
      const run = rotating.then(async () => {
        const kr = unsealed();
        const nextTerm = Math.max(...kr.terms.keys()) + 1;
        const added: TermKey = { term: nextTerm, key: freshKey(), installTime: now(), encryptions: 0 };
        try {
          await physical.batch([keyringOp(kr.rootKey, [...kr.terms.values(), added], nextTerm)]);
        } catch (err) {
          added.key.fill(0);
          throw err;
        }
        if (keyring !== kr) {
          // Sealed while persisting: the new term is on disk, nothing stays in memory.
          added.key.fill(0);
          throw new BarrierSealedError();
        }
        kr.terms.set(nextTerm, added);
        kr.active = added;
        return { term: nextTerm };
      });
      rotating = run.catch(() => undefined);
      return run;
    },

    async verifyUnsealKey(unsealKey) {
      const kek = assertKeyLength(unsealKey);
      const rootEnv = await physical.get(ROOT_KEY_PATH);
      if (rootEnv === null || envelopeTerm(rootEnv) !== META_TERM) return false;
      const rootKey = decrypt(kek, ROOT_KEY_PATH, rootEnv);
      const ok = rootKey !== null && rootKey.length === KEY_BYTES;
      rootKey?.fill(0);
      return ok;
    },

    async rekey(newUnsealKey, rekeyOpts = {}) {
      const kek = assertKeyLength(newUnsealKey);
      const kr = unsealed();
      const rootOp: PhysicalOp = { type: 'put', key: ROOT_KEY_PATH, value: encrypt(kek, META_TERM, ROOT_KEY_PATH, kr.rootKey) };
      await physical.batch([rootOp, ...(rekeyOpts.extraOps ?? [])]);
    },

    invalidate,

    async refresh() {
      const kr = unsealed();
      const ringEnv = await physical.get(KEYRING_PATH);
      const plain = ringEnv !== null && envelopeTerm(ringEnv) === META_TERM ? decrypt(kr.rootKey, KEYRING_PATH, ringEnv) : null;
      if (plain === null) throw new BarrierIntegrityError(KEYRING_PATH);
      try {
        const fresh = decodeKeyring(plain, Buffer.from(kr.rootKey));
        if (keyring !== kr) {
          wipeKeyring(fresh);
          throw new BarrierSealedError();
        }
        keyring = fresh;
        wipeKeyring(kr);
      } finally {
        plain.fill(0);
        clearCache();
      }
    },

    opensKeyring(envelope) {
      const kr = unsealed();
      const plain = envelopeTerm(envelope) === META_TERM ? decrypt(kr.rootKey, KEYRING_PATH, envelope) : null;
      plain?.fill(0);
      return plain !== null;
    },

    keyStatus() {
      const { active } = unsealed();
      return { term: active.term, installTime: active.installTime, encryptions: active.encryptions };
    },

    async get(key) {
      unsealed();
      // The caller owns what it gets: the cache copies in and out, so a write that wipes the
      // cached copy before this caller resumes cannot touch it.
      return cache.get(
        key,
        async () => {
          const envelope = await physical.get(key);
          const kr = unsealed();
          return envelope === null ? null : open(kr, key, envelope);
        },
        (v) => cacheable(key, v.length),
      );
    },

    async put(key, value) {
      assertWritable(key);
      const envelope = sealValue(unsealed(), key, value);
      invalidate(key);
      try {
        await physical.put(key, envelope);
      } finally {
        invalidate(key);
      }
    },

    async delete(key) {
      assertWritable(key);
      unsealed();
      invalidate(key);
      try {
        await physical.delete(key);
      } finally {
        invalidate(key);
      }
    },

    async list(prefix) {
      unsealed();
      return physical.list(prefix);
    },

    async batch(ops) {
      const kr = unsealed();
      for (const op of ops) assertWritable(op.key);
      const sealedOps = ops.map((op): PhysicalOp =>
        op.type === 'put' ? { type: 'put', key: op.key, value: sealValue(kr, op.key, op.value) } : op,
      );
      for (const op of ops) invalidate(op.key);
      try {
        await physical.batch(sealedOps);
      } finally {
        for (const op of ops) invalidate(op.key);
      }
    },

    async *scan(prefix): AsyncIterable<PhysicalEntry> {
      unsealed();
      for await (const e of physical.scan(prefix)) {
        if (RESERVED_KEYS.has(e.key)) continue;
        yield { key: e.key, value: open(unsealed(), e.key, e.value) };
      }
    },

    async *scanKeys(prefix, range): AsyncIterable<string> {
      unsealed();
      for await (const key of physical.scanKeys(prefix, range)) if (!RESERVED_KEYS.has(key)) yield key;
    },

    async *scanKeyPages(prefix): AsyncIterable<readonly string[]> {
      unsealed();
      const reserved = [...RESERVED_KEYS].some((key) => key.startsWith(prefix));
      for await (const page of keyPages(physical, prefix)) yield reserved ? page.filter((key) => !RESERVED_KEYS.has(key)) : page;
    },
  };
  return barrier;
}
