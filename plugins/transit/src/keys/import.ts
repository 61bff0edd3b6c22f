/**
 * Turns imported material (already unwrapped from BYOK) into a key version,
 * checking that it really is a key of the declared type. An imported private
 * key is stored like a generated one; a public-key-only import has no private
 * half and can only verify and encrypt.
 */
import { createPrivateKey, createPublicKey, type KeyObject, randomBytes } from 'node:crypto';
import { badRequest } from '@strongroom/sdk-plugin';
import { EC_CURVES, isEcdsa, isRsa, isSymmetric, type KeyType, rsaBits, symmetricKeySize } from './key-types.js';
import type { KeyVersionRecord } from './policy.js';

const CURVE_ALIASES: Record<string, string> = { prime256v1: 'prime256v1', secp384r1: 'secp384r1', secp521r1: 'secp521r1' };

function checkAsymmetric(type: KeyType, k: KeyObject): void {
  const kt = k.asymmetricKeyType;
  if (type === 'ed25519' && kt === 'ed25519') return;
  if (isEcdsa(type) && kt === 'ec' && CURVE_ALIASES[k.asymmetricKeyDetails?.namedCurve ?? ''] === EC_CURVES[type].curve) return;
  if (isRsa(type) && kt === 'rsa' && k.asymmetricKeyDetails?.modulusLength === rsaBits(type)) return;
  throw badRequest(`imported key does not match key type ${type}`);
}

/** Material from a BYOK ciphertext: raw bytes for symmetric types, PKCS#8 DER for asymmetric ones. */
export function versionFromMaterial(type: KeyType, material: Buffer, now: number): KeyVersionRecord {
  const hmacKey = randomBytes(32).toString('base64');
  if (type === 'hmac') throw badRequest('keys of type hmac cannot be imported');
  if (isSymmetric(type)) {
    if (material.length !== symmetricKeySize(type)) {
      throw badRequest(`imported key must be ${symmetricKeySize(type)} bytes for key type ${type}, got ${material.length}`);
    }
    return { key: material.toString('base64'), hmac_key: hmacKey, creation_time: now };
  }
  let priv: KeyObject;
  try {
    priv = createPrivateKey({ key: material, format: 'der', type: 'pkcs8' });
  } catch {
    throw badRequest('imported key material is not a PKCS#8 DER private key');
  }
  checkAsymmetric(type, priv);
  return {
    private_key: priv.export({ type: 'pkcs8', format: 'der' }).toString('base64'),
    public_key: createPublicKey(priv).export({ type: 'spki', format: 'pem' }).toString(),
    hmac_key: hmacKey,
    creation_time: now,
  };
}

/** A public-key-only version from a PEM public key (asymmetric types only). */
export function versionFromPublicKey(type: KeyType, pem: string, now: number): KeyVersionRecord {
  if (isSymmetric(type) || type === 'hmac') throw badRequest('public_key is only valid for asymmetric key types');
  let pub: KeyObject;
  try {
    pub = createPublicKey(pem);
  } catch {
    throw badRequest('public_key is not a valid PEM public key');
  }
  checkAsymmetric(type, pub);
  return {
    public_key: pub.export({ type: 'spki', format: 'pem' }).toString(),
    hmac_key: randomBytes(32).toString('base64'),
    creation_time: now,
  };
}

/** Whether a private key matches a stored public key (import_version filling in a public-only version). */
export function samePublicKey(privateVersion: KeyVersionRecord, publicPem: string): boolean {
  if (!privateVersion.public_key) return false;
  const a = createPublicKey(privateVersion.public_key).export({ type: 'spki', format: 'der' });
  const b = createPublicKey(publicPem).export({ type: 'spki', format: 'der' });
  return a.equals(b);
}
