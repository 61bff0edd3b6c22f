/**
 * XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha-03) on top of node:crypto's
 * IETF ChaCha20-Poly1305: HChaCha20 turns the key and the first 16 nonce bytes
 * into a subkey, and the last 8 nonce bytes (after 4 zero bytes) become the
 * 12-byte IETF nonce. The subkey is as secret as the key and never leaves here.
 */
import { createCipheriv, createDecipheriv } from 'node:crypto';

const SIGMA = [0x61707865, 0x3320646e, 0x79622d32, 0x6b206574];

function rotl(v: number, n: number): number {
  return ((v << n) | (v >>> (32 - n))) >>> 0;
}

/** HChaCha20 core: 32-byte key, 16-byte nonce -> 32-byte subkey. */
export function hchacha20(key: Uint8Array, nonce16: Uint8Array): Buffer {
  if (key.length !== 32) throw new Error('hchacha20: key must be 32 bytes');
  if (nonce16.length !== 16) throw new Error('hchacha20: nonce must be 16 bytes');
  const k = Buffer.from(key.buffer, key.byteOffset, key.length);
  const n = Buffer.from(nonce16.buffer, nonce16.byteOffset, nonce16.length);
  const s = new Uint32Array(16);
  s[0] = SIGMA[0]!;
  s[1] = SIGMA[1]!;
  s[2] = SIGMA[2]!;
  s[3] = SIGMA[3]!;
  for (let i = 0; i < 8; i++) s[4 + i] = k.readUInt32LE(i * 4);
  for (let i = 0; i < 4; i++) s[12 + i] = n.readUInt32LE(i * 4);
  const qr = (a: number, b: number, c: number, d: number): void => {
    s[a] = (s[a]! + s[b]!) >>> 0;
    s[d] = rotl(s[d]! ^ s[a]!, 16);
    s[c] = (s[c]! + s[d]!) >>> 0;
    s[b] = rotl(s[b]! ^ s[c]!, 12);
    s[a] = (s[a]! + s[b]!) >>> 0;
    s[d] = rotl(s[d]! ^ s[a]!, 8);
    s[c] = (s[c]! + s[d]!) >>> 0;
    s[b] = rotl(s[b]! ^ s[c]!, 7);
  };
  for (let i = 0; i < 10; i++) {
    qr(0, 4, 8, 12);
    qr(1, 5, 9, 13);
    qr(2, 6, 10, 14);
    qr(3, 7, 11, 15);
    qr(0, 5, 10, 15);
    qr(1, 6, 11, 12);
    qr(2, 7, 8, 13);
    qr(3, 4, 9, 14);
  }
  const out = Buffer.alloc(32);
  for (let i = 0; i < 4; i++) out.writeUInt32LE(s[i]!, i * 4);
  for (let i = 0; i < 4; i++) out.writeUInt32LE(s[12 + i]!, 16 + i * 4);
  s.fill(0);
  return out;
}

function subkeyAndNonce(key: Uint8Array, nonce24: Uint8Array): [Buffer, Buffer] {
  if (nonce24.length !== 24) throw new Error('xchacha20-poly1305: nonce must be 24 bytes');
  const subkey = hchacha20(key, nonce24.subarray(0, 16));
  const n12 = Buffer.alloc(12);
  n12.set(nonce24.subarray(16, 24), 4);
  return [subkey, n12];
}

/** Returns ciphertext || 16-byte tag. */
export function xchachaSeal(key: Uint8Array, nonce24: Uint8Array, plaintext: Uint8Array, aad?: Uint8Array): Buffer {
  const [subkey, n12] = subkeyAndNonce(key, nonce24);
  const c = createCipheriv('chacha20-poly1305', subkey, n12, { authTagLength: 16 });
  if (aad && aad.length) c.setAAD(aad, { plaintextLength: plaintext.length });
  const out = Buffer.concat([c.update(plaintext), c.final(), c.getAuthTag()]);
  subkey.fill(0);
  return out;
}

/** Opens ciphertext || tag; throws when authentication fails. */
export function xchachaOpen(key: Uint8Array, nonce24: Uint8Array, sealed: Uint8Array, aad?: Uint8Array): Buffer {
  if (sealed.length < 16) throw new Error('ciphertext too short');
  const [subkey, n12] = subkeyAndNonce(key, nonce24);
  try {
    const d = createDecipheriv('chacha20-poly1305', subkey, n12, { authTagLength: 16 });
    d.setAuthTag(sealed.subarray(sealed.length - 16));
    if (aad && aad.length) d.setAAD(aad, { plaintextLength: sealed.length - 16 });
    return Buffer.concat([d.update(sealed.subarray(0, sealed.length - 16)), d.final()]);
  } finally {
    subkey.fill(0);
  }
}
