/**
 * The transit key "policy": every version's key material, its own random
 * 256-bit HMAC secret, and the flags and bounds of the key.
 *
 * Security invariants kept here:
 * - key material only leaves this module through the export and backup code
 *   paths, which check `exportable` / `allow_plaintext_backup` first;
 * - `exportable` and `allow_plaintext_backup` can be set but never unset;
 * - the record is stored through the mount's storage, which the core's
 *   barrier encrypts; nothing secret goes into a storage key.
 */
import { createPrivateKey, createPublicKey, generateKeyPair, hkdfSync, KeyObject, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { badRequest } from '@strongroom/sdk-plugin';
import { z } from 'zod';
import {
  EC_CURVES,
  KEY_TYPES,
  isEcdsa,
  isRsa,
  isSymmetric,
  type KeyType,
  rsaBits,
  symmetricKeySize,
} from './key-types.js';

const generateKeyPairAsync = promisify(generateKeyPair);

/** One stored key version. Binary values are base64. */
export const keyVersionRecord = z.object({
  /** Symmetric key, or the HMAC key of an `hmac` key. */
  key: z.string().optional(),
  /** PKCS#8 DER of an asymmetric private key (absent for public-key-only imports). */
  private_key: z.string().optional(),
  /** SPKI PEM of an asymmetric public key. */
  public_key: z.string().optional(),
  /** This version's own HMAC secret (32 random bytes). */
  hmac_key: z.string(),
  /** Unix milliseconds. */
  creation_time: z.number(),
});
export type KeyVersionRecord = z.output<typeof keyVersionRecord>;

/** A key as stored at `policy/<name>` (and, whole, in a backup). */
export const policyRecord = z.object({
  name: z.string(),
  type: z.enum(KEY_TYPES),
  derived: z.boolean(),
  kdf: z.literal('hkdf_sha256'),
  convergent_encryption: z.boolean(),
  convergent_version: z.number().int(),
  exportable: z.boolean(),
  allow_plaintext_backup: z.boolean(),
  deletion_allowed: z.boolean(),
  /** Bytes; for `hmac` keys 32..512, else the symmetric key size (0 for asymmetric). */
  key_size: z.number().int().min(0),
  /** Seconds; 0 disables. */
  auto_rotate_period: z.number().int().min(0),
  min_decryption_version: z.number().int().min(0),
  min_encryption_version: z.number().int().min(0),
  min_available_version: z.number().int().min(0),
  latest_version: z.number().int().min(0),
  versions: z.record(z.string(), keyVersionRecord),
  imported: z.boolean(),
  allow_rotation: z.boolean(),
  /** Set when an imported key was rotated by the service: further imports are refused. */
  rotated_after_import: z.boolean(),
  soft_deleted: z.boolean(),
  backup_info: z.object({ time: z.string(), version: z.number() }).optional(),
  restore_info: z.object({ time: z.string(), version: z.number() }).optional(),
});
export type PolicyRecord = z.output<typeof policyRecord>;

export interface NewPolicyOptions {
  name: string;
  type: KeyType;
  derived?: boolean;
  convergent_encryption?: boolean;
  exportable?: boolean;
  allow_plaintext_backup?: boolean;
  key_size?: number;
  auto_rotate_period?: number;
}

const HMAC_KEY_SIZE_MIN = 32;
const HMAC_KEY_SIZE_MAX = 512;

/** Validates creation options (the 400s of "create key") and returns an empty policy without versions. */
export function newPolicyRecord(o: NewPolicyOptions): PolicyRecord {
  const derived = o.derived ?? false;
  const convergent = o.convergent_encryption ?? false;
  if (convergent && !derived) throw badRequest('convergent encryption requires derivation to be enabled');
  if (convergent && !isSymmetric(o.type)) throw badRequest(`convergent encryption not supported for keys of type ${o.type}`);
  if (derived && !(isSymmetric(o.type) || o.type === 'ed25519')) {
    throw badRequest(`key derivation not supported for keys of type ${o.type}`);
  }
  let keySize = 0;
  if (o.type === 'hmac') {
    keySize = o.key_size && o.key_size > 0 ? o.key_size : 32;
    if (keySize < HMAC_KEY_SIZE_MIN || keySize > HMAC_KEY_SIZE_MAX) {
      throw badRequest(`key_size must be between ${HMAC_KEY_SIZE_MIN} and ${HMAC_KEY_SIZE_MAX} bytes`);
    }
  } else {
    if (o.key_size) throw badRequest('key_size is only valid for keys of type hmac');
    if (isSymmetric(o.type)) keySize = symmetricKeySize(o.type);
  }
  const period = o.auto_rotate_period ?? 0;
  checkAutoRotatePeriod(period);
  return {
    name: o.name,
    type: o.type,
    derived,
    kdf: 'hkdf_sha256',
    convergent_encryption: convergent,
    convergent_version: convergent ? 3 : 0,
    exportable: o.exportable ?? false,
    allow_plaintext_backup: o.allow_plaintext_backup ?? false,
    deletion_allowed: false,
    key_size: keySize,
    auto_rotate_period: period,
    min_decryption_version: 0,
    min_encryption_version: 0,
    min_available_version: 0,
    latest_version: 0,
    versions: {},
    imported: false,
    allow_rotation: true,
    rotated_after_import: false,
    soft_deleted: false,
  };
}

export function checkAutoRotatePeriod(seconds: number): void {
  if (seconds !== 0 && seconds < 3600) {
    throw badRequest('auto_rotate_period must be 0 to disable or at least an hour');
  }
}

/** Generates fresh material for one version of a key of type `type`. */
export async function generateVersion(type: KeyType, keySize: number, now: number): Promise<KeyVersionRecord> {
  const hmacKey = randomBytes(32).toString('base64');
  if (isSymmetric(type) || type === 'hmac') {
    return { key: randomBytes(keySize).toString('base64'), hmac_key: hmacKey, creation_time: now };
  }
  let pair: { privateKey: KeyObject; publicKey: KeyObject };
  if (type === 'ed25519') pair = await generateKeyPairAsync('ed25519');
  else if (isEcdsa(type)) pair = await generateKeyPairAsync('ec', { namedCurve: EC_CURVES[type].curve });
  else if (isRsa(type)) pair = await generateKeyPairAsync('rsa', { modulusLength: rsaBits(type) });
  else throw badRequest(`unsupported key type ${String(type)}`);
  return {
    private_key: pair.privateKey.export({ type: 'pkcs8', format: 'der' }).toString('base64'),
    public_key: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    hmac_key: hmacKey,
    creation_time: now,
  };
}

/** Adds a new latest version (rotate). Caller checks the type may rotate. */
export function addVersion(p: PolicyRecord, v: KeyVersionRecord): number {
  const n = p.latest_version + 1;
  p.versions[String(n)] = v;
  p.latest_version = n;
  if (p.min_available_version === 0) p.min_available_version = 1;
  return n;
}

/** Decoded, ready-to-use material of one version (kept in the per-mount cache). */
export interface LoadedVersion {
  version: number;
  key?: Buffer;
  hmacKey: Buffer;
  privateKey?: KeyObject;
  publicKey?: KeyObject;
  creationTime: number;
}

/**
 * A policy plus decoded versions, built lazily so that a hot key decodes its
 * material once per process rather than once per request.
 */
export interface LoadedPolicy {
  /** The record as the store caches it: frozen, shared; clone it to change it. */
  record: Readonly<PolicyRecord>;
  version(n: number): LoadedVersion;
}

export function loadPolicy(record: Readonly<PolicyRecord>): LoadedPolicy {
  const cache = new Map<number, LoadedVersion>();
  return {
    record,
    version(n) {
      const hit = cache.get(n);
      if (hit) return hit;
      const v = record.versions[String(n)];
      if (!v) throw badRequest(`key version ${n} not found`);
      const lv: LoadedVersion = { version: n, hmacKey: Buffer.from(v.hmac_key, 'base64'), creationTime: v.creation_time };
      if (v.key !== undefined) lv.key = Buffer.from(v.key, 'base64');
      if (v.private_key !== undefined) {
        lv.privateKey = createPrivateKey({ key: Buffer.from(v.private_key, 'base64'), format: 'der', type: 'pkcs8' });
        lv.publicKey = createPublicKey(lv.privateKey);
      } else if (v.public_key !== undefined) {
        lv.publicKey = createPublicKey(v.public_key);
      }
      cache.set(n, lv);
      return lv;
    },
  };
}

/** HKDF-SHA256(key, salt = empty, info = context), Vault's derivation for derived keys. */
export function deriveKey(key: Buffer, context: Buffer, length: number): Buffer {
  return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), context, length));
}

/** The 32-byte Ed25519 seed stored inside a PKCS#8 private key. */
export function ed25519Seed(privateKey: KeyObject): Buffer {
  const jwk = privateKey.export({ format: 'jwk' });
  if (!jwk.d) throw badRequest('not an ed25519 private key');
  return Buffer.from(jwk.d, 'base64url');
}

/** Ed25519 private key from a 32-byte seed (derived ed25519 keys). */
export function ed25519FromSeed(seed: Buffer): KeyObject {
  // PKCS#8 prefix for an Ed25519 private key (RFC 8410): fixed 16 bytes then the seed.
  const prefix = Buffer.from('302e020100300506032b657004220420', 'hex');
  return createPrivateKey({ key: Buffer.concat([prefix, seed]), format: 'der', type: 'pkcs8' });
}


