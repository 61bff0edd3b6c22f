/**
 * The barrier's value format, one AES-256-GCM envelope per stored value:
 *
 *   [term: 4 bytes big-endian][version: 1 byte][nonce: 12][ciphertext][tag: 16]
 *
 * Version 1 authenticates the storage path as GCM associated data, so a value
 * copied or moved to another key fails to decrypt. Nonces are random (96 bits)
 * from the core's pooled node:crypto source (random.ts); each byte is handed out once.
 */
import { createCipheriv, createDecipheriv } from 'node:crypto';
import { fillRandom } from '@strongroom/sdk-plugin/host';

const ENVELOPE_VERSION = 1;
const HEADER = 5;
const NONCE = 12;
const TAG = 16;
const ENVELOPE_OVERHEAD = HEADER + NONCE + TAG;
const ENCRYPT_SLICE = 1024 * 1024;

/** The term an envelope claims, or -1 when it is too short or of an unknown version. */
export function envelopeTerm(envelope: Uint8Array): number {
  if (envelope.length < ENVELOPE_OVERHEAD || envelope[4] !== ENVELOPE_VERSION) return -1;
  return ((envelope[0] as number) * 0x1000000 + (((envelope[1] as number) << 16) | ((envelope[2] as number) << 8) | (envelope[3] as number))) >>> 0;
}

export function encrypt(key: Buffer, term: number, path: string, plaintext: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(ENVELOPE_OVERHEAD + plaintext.length);
  out.writeUInt32BE(term, 0);
  out[4] = ENVELOPE_VERSION;
  fillRandom(out, HEADER, NONCE);
  const cipher = createCipheriv('aes-256-gcm', key, out.subarray(HEADER, HEADER + NONCE));
  cipher.setAAD(Buffer.from(path, 'utf8'));
  // A large value goes through in slices, so its whole ciphertext is never held twice (issue 31).
  for (let at = 0; at < plaintext.length; at += ENCRYPT_SLICE) {
    cipher.update(plaintext.subarray(at, at + ENCRYPT_SLICE)).copy(out, HEADER + NONCE + at);
  }
  cipher.final();
  cipher.getAuthTag().copy(out, HEADER + NONCE + plaintext.length);
  return out;
}

/** Decrypts and authenticates; returns null when the envelope is malformed or fails authentication. */
export function decrypt(key: Buffer, path: string, envelope: Uint8Array): Buffer | null {
  if (envelope.length < ENVELOPE_OVERHEAD || envelope[4] !== ENVELOPE_VERSION) return null;
  const env = Buffer.from(envelope.buffer, envelope.byteOffset, envelope.byteLength);
  const tagAt = env.length - TAG;
  const decipher = createDecipheriv('aes-256-gcm', key, env.subarray(HEADER, HEADER + NONCE));
  decipher.setAAD(Buffer.from(path, 'utf8'));
  decipher.setAuthTag(env.subarray(tagAt));
  const pt = decipher.update(env.subarray(HEADER + NONCE, tagAt));
  try {
    decipher.final();
  } catch {
    pt.fill(0);
    return null;
  }
  return pt;
}
