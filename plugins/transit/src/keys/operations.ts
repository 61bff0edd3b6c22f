/**
 * Data operations on a loaded key: encrypt, decrypt, sign, verify, hmac.
 *
 * Security invariants kept here:
 * - every failure a caller can cause (bad base64, wrong context, tampering,
 *   a version below the minimum) is a 400 with a clear message, never a 500,
 *   and never says more than "unable to decrypt" about why authentication failed;
 * - HMAC and signature checks use constant-time comparison;
 * - soft-deleted keys refuse every data operation.
 */
import {
  constants,
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  createPublicKey,
  type KeyObject,
  privateDecrypt,
  privateEncrypt,
  publicDecrypt,
  publicEncrypt,
  randomBytes,
  sign as nodeSign,
  timingSafeEqual,
  verify as nodeVerify,
} from 'node:crypto';
import { badRequest } from '@strongroom/sdk-plugin';
import { decodeBase64, decodeBase64Url, decodeVersioned, encodeVersioned } from '../crypto/ciphertext.js';
import { type HashAlgorithm, nodeHash } from '../crypto/hashes.js';
import { xchachaOpen, xchachaSeal } from '../crypto/xchacha20.js';
import { isEcdsa, isRsa, isSymmetric, nonceSize, type SymmetricType, typeSupport } from './key-types.js';
import { deriveKey, ed25519FromSeed, ed25519Seed, type LoadedPolicy, type LoadedVersion } from './policy.js';

const TAG = 16;

function assertUsable(p: LoadedPolicy): void {
  if (p.record.soft_deleted) throw badRequest(`key "${p.record.name}" is soft-deleted; restore it first`);
}

/** The version to encrypt, sign or hmac with: `requested` 0 means the latest. */
function encryptionVersion(p: LoadedPolicy, requested = 0): number {
  const r = p.record;
  if (r.latest_version === 0) throw badRequest('key has no versions');
  const v = requested === 0 ? r.latest_version : requested;
  if (v > r.latest_version || v < 1) throw badRequest(`invalid key version ${v}: requested version does not exist`);
  if (r.min_encryption_version > 0 && v < r.min_encryption_version) {
    throw badRequest('requested version for encryption is less than the minimum encryption key version');
  }
  if (v < r.min_available_version) throw badRequest(`invalid key version ${v}: version has been trimmed`);
  return v;
}

/** Checks a version named by a ciphertext, signature or hmac against the policy's bounds. */
function decryptionVersion(p: LoadedPolicy, v: number): number {
  const r = p.record;
  if (v < Math.max(1, r.min_decryption_version)) throw badRequest('ciphertext or signature version is disallowed by policy (too old)');
  if (v > r.latest_version) throw badRequest('invalid ciphertext: version is too new');
  if (v < r.min_available_version) throw badRequest('invalid ciphertext: key version has been trimmed');
  return v;
}

function requireContext(p: LoadedPolicy, context: Buffer | undefined): Buffer | undefined {
  if (p.record.derived) {
    if (!context || context.length === 0) throw badRequest('missing \'context\' for key derivation; the key was created using a derived key, which means additional, per-request information must be included in order to perform operations with the key');
    return context;
  }
  return undefined;
}

function symmetricKeyFor(p: LoadedPolicy, lv: LoadedVersion, context: Buffer | undefined): Buffer {
  const key = lv.key;
  if (!key) throw badRequest('key version has no symmetric key material');
  const ctx = requireContext(p, context);
  return ctx ? deriveKey(key, ctx, key.length) : key;
}

/**
 * Convergent nonce (convergent version 3): HMAC-SHA256 under the version's
 * own HMAC key of length(context) || context || plaintext, truncated. Equal
 * (context, plaintext) give equal ciphertexts; nothing else does.
 */
function convergentNonce(hmacKey: Buffer, context: Buffer, plaintext: Buffer, size: number): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(context.length);
  return createHmac('sha256', hmacKey).update(len).update(context).update(plaintext).digest().subarray(0, size);
}

function aeadSeal(type: SymmetricType, key: Buffer, nonce: Buffer, plaintext: Buffer, aad?: Buffer): Buffer {
  if (type === 'xchacha20-poly1305') return Buffer.concat([nonce, xchachaSeal(key, nonce, plaintext, aad)]);
  const alg = type === 'chacha20-poly1305' ? 'chacha20-poly1305' : type === 'aes128-gcm96' ? 'aes-128-gcm' : 'aes-256-gcm';
  const c = createCipheriv(alg as 'aes-256-gcm', key, nonce, { authTagLength: TAG });
  if (aad && aad.length) c.setAAD(aad, { plaintextLength: plaintext.length });
  return Buffer.concat([nonce, c.update(plaintext), c.final(), c.getAuthTag()]);
}

function aeadOpen(type: SymmetricType, key: Buffer, data: Buffer, aad?: Buffer): Buffer {
  const ns = nonceSize(type);
  if (data.length < ns + TAG) throw badRequest('invalid ciphertext: unable to decrypt');
  const nonce = data.subarray(0, ns);
  try {
    if (type === 'xchacha20-poly1305') return xchachaOpen(key, nonce, data.subarray(ns), aad);
    const alg = type === 'chacha20-poly1305' ? 'chacha20-poly1305' : type === 'aes128-gcm96' ? 'aes-128-gcm' : 'aes-256-gcm';
    const d = createDecipheriv(alg as 'aes-256-gcm', key, nonce, { authTagLength: TAG });
    d.setAuthTag(data.subarray(data.length - TAG));
    if (aad && aad.length) d.setAAD(aad, { plaintextLength: data.length - ns - TAG });
    return Buffer.concat([d.update(data.subarray(ns, data.length - TAG)), d.final()]);
  } catch {
    throw badRequest('invalid ciphertext: unable to decrypt');
  }
}

export interface EncryptInput {
  plaintext: Buffer;
  context?: Buffer;
  associatedData?: Buffer;
  /** Caller-given nonce: only used by convergent keys; otherwise checked and ignored. */
  nonce?: Buffer;
  keyVersion?: number;
}

export function encrypt(p: LoadedPolicy, i: EncryptInput): string {
  assertUsable(p);
  const r = p.record;
  const t = r.type;
  if (!typeSupport(t).supports_encryption) throw badRequest(`key type ${t} does not support encryption`);
  const v = encryptionVersion(p, i.keyVersion ?? 0);
  const lv = p.version(v);
  if (isRsa(t)) {
    if (i.associatedData?.length) throw badRequest('associated_data is not supported for RSA keys');
    if (!lv.publicKey) throw badRequest('key version has no public key');
    const ct = publicEncrypt({ key: lv.publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, i.plaintext);
    return encodeVersioned(v, ct.toString('base64'));
  }
  if (!isSymmetric(t)) throw badRequest(`key type ${t} does not support encryption`);
  const key = symmetricKeyFor(p, lv, i.context);
  const ns = nonceSize(t);
  let nonce: Buffer;
  if (r.convergent_encryption) {
    if (i.nonce && i.nonce.length) {
      if (i.nonce.length !== ns) throw badRequest(`invalid nonce: must be ${ns} bytes`);
      nonce = i.nonce;
    } else {
      nonce = convergentNonce(lv.hmacKey, i.context ?? Buffer.alloc(0), i.plaintext, ns);
    }
  } else {
    if (i.nonce && i.nonce.length && i.nonce.length !== 12 && i.nonce.length !== ns) throw badRequest(`invalid nonce: must be ${ns} bytes`);
    nonce = randomBytes(ns);
  }
  return encodeVersioned(v, aeadSeal(t, key, nonce, i.plaintext, i.associatedData).toString('base64'));
}

export interface DecryptInput {
  ciphertext: string;
  context?: Buffer;
  associatedData?: Buffer;
}

export function decrypt(p: LoadedPolicy, i: DecryptInput): { plaintext: Buffer; version: number } {
  assertUsable(p);
  const t = p.record.type;
  if (!typeSupport(t).supports_decryption) throw badRequest(`key type ${t} does not support decryption`);
  const { version, payload } = decodeVersioned(i.ciphertext);
  decryptionVersion(p, version);
  const data = decodeBase64(payload, 'ciphertext');
  const lv = p.version(version);
  if (isRsa(t)) {
    if (!lv.privateKey) throw badRequest('key version has no private key: only a public key was imported');
    try {
      return {
        plaintext: privateDecrypt({ key: lv.privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, data),
        version,
      };
    } catch {
      throw badRequest('invalid ciphertext: unable to decrypt');
    }
  }
  if (!isSymmetric(t)) throw badRequest(`key type ${t} does not support decryption`);
  const key = symmetricKeyFor(p, lv, i.context);
  return { plaintext: aeadOpen(t, key, data, i.associatedData), version };
}

export interface HmacInput {
  input: Buffer;
  algorithm: HashAlgorithm;
  keyVersion?: number;
}

function hmacKeyOf(p: LoadedPolicy, lv: LoadedVersion): Buffer {
  // An `hmac` key's material is its key; every other type uses the version's own HMAC secret.
  if (p.record.type === 'hmac') {
    if (!lv.key) throw badRequest('key version has no HMAC key');
    return lv.key;
  }
  return lv.hmacKey;
}

export function hmac(p: LoadedPolicy, i: HmacInput): string {
  assertUsable(p);
  const v = encryptionVersion(p, i.keyVersion ?? 0);
  const mac = createHmac(nodeHash(i.algorithm), hmacKeyOf(p, p.version(v))).update(i.input).digest();
  return encodeVersioned(v, mac.toString('base64'));
}

export function verifyHmac(p: LoadedPolicy, i: { input: Buffer; hmac: string; algorithm: HashAlgorithm }): boolean {
  assertUsable(p);
  const { version, payload } = decodeVersioned(i.hmac, 'hmac');
  decryptionVersion(p, version);
  const given = decodeBase64(payload, 'hmac');
  const mac = createHmac(nodeHash(i.algorithm), hmacKeyOf(p, p.version(version))).update(i.input).digest();
  return given.length === mac.length && timingSafeEqual(given, mac);
}

export interface SignInput {
  input: Buffer;
  keyVersion?: number;
  hashAlgorithm: HashAlgorithm;
  context?: Buffer;
  prehashed?: boolean;
  /** RSA: `pss` (default) or `pkcs1v15`. */
  signatureAlgorithm?: 'pss' | 'pkcs1v15';
  /** ECDSA: `asn1` (default) or `jws`. */
  marshalingAlgorithm?: 'asn1' | 'jws';
  /** RSA PSS: 'auto' (default), 'hash', or a byte count. */
  saltLength?: 'auto' | 'hash' | number;
}

function signingKey(p: LoadedPolicy, lv: LoadedVersion, context: Buffer | undefined): { priv?: KeyObject; pub?: KeyObject } {
  if (p.record.type === 'ed25519' && p.record.derived) {
    const ctx = requireContext(p, context);
    if (!lv.privateKey || !ctx) throw badRequest('key version has no private key');
    const priv = ed25519FromSeed(deriveKey(ed25519Seed(lv.privateKey), ctx, 32));
    return { priv, pub: createPublicKey(priv) };
  }
  return { priv: lv.privateKey, pub: lv.publicKey };
}

/** DER DigestInfo prefixes (RFC 8017 section 9.2 note 1) for PKCS#1 v1.5 over a prehashed input. */
const DIGEST_INFO: Record<string, string> = {
  sha1: '3021300906052b0e03021a05000414',
  sha224: '302d300d06096086480165030402040500041c',
  sha256: '3031300d060960864801650304020105000420',
  sha384: '3041300d060960864801650304020205000430',
  sha512: '3051300d060960864801650304020305000440',
  'sha3-224': '302d300d06096086480165030402070500041c',
  'sha3-256': '3031300d060960864801650304020805000420',
  'sha3-384': '3041300d060960864801650304020905000430',
  'sha3-512': '3051300d060960864801650304020a05000440',
};

function pssSalt(s: SignInput['saltLength'], hash: string, signing: boolean): number {
  if (s === undefined || s === 'auto') return signing ? constants.RSA_PSS_SALTLEN_MAX_SIGN : constants.RSA_PSS_SALTLEN_AUTO;
  if (s === 'hash') return createHash(hash).digest().length;
  if (!Number.isInteger(s) || s < 0) throw badRequest('invalid salt_length');
  return s;
}

export function sign(p: LoadedPolicy, i: SignInput): { signature: string; version: number } {
  assertUsable(p);
  const t = p.record.type;
  if (!typeSupport(t).supports_signing) throw badRequest(`key type ${t} does not support signing`);
  const v = encryptionVersion(p, i.keyVersion ?? 0);
  const { priv } = signingKey(p, p.version(v), i.context);
  if (!priv) throw badRequest('key version has no private key: only a public key was imported');
  const hash = nodeHash(i.hashAlgorithm);
  let sig: Buffer;
  if (t === 'ed25519') {
    if (i.prehashed) throw badRequest('prehashed is not supported for ed25519 keys');
    sig = nodeSign(null, i.input, priv);
  } else if (isEcdsa(t)) {
    if (i.prehashed) throw badRequest('prehashed is not supported for ECDSA keys');
    const jws = i.marshalingAlgorithm === 'jws';
    sig = nodeSign(hash, i.input, { key: priv, dsaEncoding: jws ? 'ieee-p1363' : 'der' });
    return { signature: encodeVersioned(v, jws ? sig.toString('base64url') : sig.toString('base64')), version: v };
  } else {
    const pss = (i.signatureAlgorithm ?? 'pss') === 'pss';
    if (i.prehashed) {
      if (pss) throw badRequest('prehashed is only supported with signature_algorithm pkcs1v15 for RSA keys');
      sig = privateEncrypt({ key: priv, padding: constants.RSA_PKCS1_PADDING }, Buffer.concat([Buffer.from(DIGEST_INFO[hash] ?? '', 'hex'), i.input]));
    } else if (pss) {
      sig = nodeSign(hash, i.input, { key: priv, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: pssSalt(i.saltLength, hash, true) });
    } else {
      sig = nodeSign(hash, i.input, { key: priv, padding: constants.RSA_PKCS1_PADDING });
    }
  }
  return { signature: encodeVersioned(v, sig.toString('base64')), version: v };
}

export function verify(p: LoadedPolicy, i: SignInput & { signature: string }): boolean {
  assertUsable(p);
  const t = p.record.type;
  if (!typeSupport(t).supports_signing) throw badRequest(`key type ${t} does not support verification`);
  const { version, payload } = decodeVersioned(i.signature, 'signature');
  decryptionVersion(p, version);
  const lv = p.version(version);
  const { pub } = signingKey(p, lv, i.context);
  if (!pub) throw badRequest('key version has no public key');
  const hash = nodeHash(i.hashAlgorithm);
  if (t === 'ed25519') {
    if (i.prehashed) throw badRequest('prehashed is not supported for ed25519 keys');
    return nodeVerify(null, i.input, pub, decodeBase64(payload, 'signature'));
  }
  if (isEcdsa(t)) {
    if (i.prehashed) throw badRequest('prehashed is not supported for ECDSA keys');
    const jws = i.marshalingAlgorithm === 'jws';
    const sig = jws ? decodeBase64Url(payload, 'signature') : decodeBase64(payload, 'signature');
    try {
      return nodeVerify(hash, i.input, { key: pub, dsaEncoding: jws ? 'ieee-p1363' : 'der' }, sig);
    } catch {
      return false;
    }
  }
  const sig = decodeBase64(payload, 'signature');
  const pss = (i.signatureAlgorithm ?? 'pss') === 'pss';
  try {
    if (i.prehashed) {
      if (pss) throw badRequest('prehashed is only supported with signature_algorithm pkcs1v15 for RSA keys');
      const expected = Buffer.concat([Buffer.from(DIGEST_INFO[hash] ?? '', 'hex'), i.input]);
      const got = publicDecrypt({ key: pub, padding: constants.RSA_PKCS1_PADDING }, sig);
      return got.length === expected.length && timingSafeEqual(got, expected);
    }
    if (pss) return nodeVerify(hash, i.input, { key: pub, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: pssSalt(i.saltLength, hash, false) }, sig);
    return nodeVerify(hash, i.input, { key: pub, padding: constants.RSA_PKCS1_PADDING }, sig);
  } catch (e) {
    if (e instanceof Error && e.name === 'StrongroomError') throw e;
    return false;
  }
}
