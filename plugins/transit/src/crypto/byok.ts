/**
 * Bring-your-own-key wire format (spec "Import ciphertext"): RSA-OAEP of an
 * ephemeral 256-bit AES key under the destination's RSA public key, followed
 * by the key material under that AES key with AES key wrap with padding
 * (RFC 5649). The ephemeral key is zeroed after use and never stored.
 */
import { constants, createCipheriv, createDecipheriv, type KeyObject, privateDecrypt, publicEncrypt, randomBytes } from 'node:crypto';
import { badRequest } from '@strongroom/sdk-plugin';
import { OAEP_HASHES } from './hashes.js';

const KWP_IV = Buffer.from('a65959a6', 'hex');

function oaepHash(hashFunction: string | undefined): string {
  const h = OAEP_HASHES[(hashFunction ?? 'SHA256').toUpperCase()];
  if (!h) throw badRequest(`invalid hash_function "${hashFunction}": expected one of SHA1, SHA224, SHA256, SHA384, SHA512`);
  return h;
}

function kwpWrap(kek: Buffer, material: Buffer): Buffer {
  const c = createCipheriv('id-aes256-wrap-pad', kek, KWP_IV);
  return Buffer.concat([c.update(material), c.final()]);
}

function kwpUnwrap(kek: Buffer, wrapped: Buffer): Buffer {
  const d = createDecipheriv('id-aes256-wrap-pad', kek, KWP_IV);
  return Buffer.concat([d.update(wrapped), d.final()]);
}

function modulusBytes(k: KeyObject): number {
  const bits = k.asymmetricKeyDetails?.modulusLength;
  if (k.asymmetricKeyType !== 'rsa' || !bits) throw badRequest('the wrapping key must be an RSA key');
  return bits / 8;
}

/** Wraps `material` for the holder of `destination` (an RSA public key). Returns base64. */
export function byokWrap(destination: KeyObject, material: Buffer, hashFunction?: string): string {
  const hash = oaepHash(hashFunction);
  const ephemeral = randomBytes(32);
  try {
    const wrappedKey = publicEncrypt({ key: destination, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: hash }, ephemeral);
    return Buffer.concat([wrappedKey, kwpWrap(ephemeral, material)]).toString('base64');
  } finally {
    ephemeral.fill(0);
  }
}

/** Unwraps an import ciphertext with the mount's wrapping (RSA private) key. */
export function byokUnwrap(wrappingKey: KeyObject, ciphertextB64: string, hashFunction?: string): Buffer {
  const hash = oaepHash(hashFunction);
  const blob = Buffer.from(ciphertextB64, 'base64');
  const n = modulusBytes(wrappingKey);
  if (blob.length <= n) throw badRequest('invalid ciphertext: too short to hold a wrapped key and key material');
  let ephemeral: Buffer;
  try {
    ephemeral = privateDecrypt({ key: wrappingKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: hash }, blob.subarray(0, n));
  } catch {
    throw badRequest('invalid ciphertext: failed to unwrap the ephemeral key (wrong wrapping key or hash_function?)');
  }
  try {
    if (ephemeral.length !== 32) throw badRequest('invalid ciphertext: the ephemeral key must be a 256-bit AES key');
    return kwpUnwrap(ephemeral, blob.subarray(n));
  } catch (e) {
    if (e instanceof Error && e.name === 'StrongroomError') throw e;
    throw badRequest('invalid ciphertext: failed to unwrap the key material');
  } finally {
    ephemeral.fill(0);
  }
}
