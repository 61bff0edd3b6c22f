/** The transit key types and what each supports (spec "Transit key", key types). */

export const KEY_TYPES = [
  'aes128-gcm96',
  'aes256-gcm96',
  'chacha20-poly1305',
  'xchacha20-poly1305',
  'ed25519',
  'ecdsa-p256',
  'ecdsa-p384',
  'ecdsa-p521',
  'rsa-2048',
  'rsa-3072',
  'rsa-4096',
  'hmac',
] as const;

export type KeyType = (typeof KEY_TYPES)[number];

export type SymmetricType = 'aes128-gcm96' | 'aes256-gcm96' | 'chacha20-poly1305' | 'xchacha20-poly1305';
export type EcdsaType = 'ecdsa-p256' | 'ecdsa-p384' | 'ecdsa-p521';
export type RsaType = 'rsa-2048' | 'rsa-3072' | 'rsa-4096';

export function isSymmetric(t: KeyType): t is SymmetricType {
  return t === 'aes128-gcm96' || t === 'aes256-gcm96' || t === 'chacha20-poly1305' || t === 'xchacha20-poly1305';
}

export function isEcdsa(t: KeyType): t is EcdsaType {
  return t === 'ecdsa-p256' || t === 'ecdsa-p384' || t === 'ecdsa-p521';
}

export function isRsa(t: KeyType): t is RsaType {
  return t === 'rsa-2048' || t === 'rsa-3072' || t === 'rsa-4096';
}

export function isAsymmetric(t: KeyType): boolean {
  return t === 'ed25519' || isEcdsa(t) || isRsa(t);
}

/** Symmetric key length in bytes. */
export function symmetricKeySize(t: SymmetricType): number {
  return t === 'aes128-gcm96' ? 16 : 32;
}

/** AEAD nonce length in bytes. */
export function nonceSize(t: SymmetricType): number {
  return t === 'xchacha20-poly1305' ? 24 : 12;
}

export const EC_CURVES: Record<EcdsaType, { curve: string; name: string; hash: string }> = {
  'ecdsa-p256': { curve: 'prime256v1', name: 'P-256', hash: 'sha256' },
  'ecdsa-p384': { curve: 'secp384r1', name: 'P-384', hash: 'sha384' },
  'ecdsa-p521': { curve: 'secp521r1', name: 'P-521', hash: 'sha512' },
};

export function rsaBits(t: RsaType): number {
  return Number(t.slice(4));
}

export interface TypeSupport {
  supports_encryption: boolean;
  supports_decryption: boolean;
  supports_derivation: boolean;
  supports_signing: boolean;
}

export function typeSupport(t: KeyType): TypeSupport {
  const sym = isSymmetric(t);
  return {
    supports_encryption: sym || isRsa(t),
    supports_decryption: sym || isRsa(t),
    supports_derivation: sym || t === 'ed25519',
    supports_signing: t === 'ed25519' || isEcdsa(t) || isRsa(t),
  };
}

/** Spec: rotate is only for key types that support encrypt and decrypt. */
export function canRotate(t: KeyType): boolean {
  const s = typeSupport(t);
  return s.supports_encryption && s.supports_decryption;
}
