/**
 * Token ids, accessors and batch-token blobs.
 *
 * Security invariants:
 * - A token id is never stored: everything is keyed by HMAC-SHA256(hmacKey, id).
 * - Accessors are stored under their own HMAC, so storage keys (which are not
 *   encrypted) reveal neither ids nor accessors.
 * - A batch token is AES-256-GCM(batchKey) over its entry; the tag authenticates
 *   it, so a client cannot forge or alter one. Decryption failures are not
 *   distinguished from "no such token".
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { randomBase62 } from '@strongroom/sdk-plugin/host';

const SERVICE_PREFIX = 'srs.';
export const BATCH_PREFIX = 'srb.';
const RANDOM_LENGTH = 24;
const BATCH_AAD = Buffer.from('strongroom-batch-token-v1', 'utf8');

export function hmacHex(key: Buffer, value: string): string {
  return createHmac('sha256', key).update(value, 'utf8').digest('hex');
}

const nsSuffix = (namespaceId: string): string => (namespaceId === 'root' || namespaceId === '' ? '' : `.${namespaceId}`);

export function newServiceTokenId(namespaceId: string): string {
  return `${SERVICE_PREFIX}${randomBase62(RANDOM_LENGTH)}${nsSuffix(namespaceId)}`;
}

export function newAccessor(namespaceId: string): string {
  return `${randomBase62(RANDOM_LENGTH)}${nsSuffix(namespaceId)}`;
}

/**
 * The namespace id an accessor carries ('root' without a suffix). It can be
 * trusted before any lookup: the accessor index is keyed by the whole string,
 * so an accessor with an altered suffix finds nothing.
 */
export function accessorNamespaceId(accessor: string): string {
  const dot = accessor.lastIndexOf('.');
  return dot === -1 ? 'root' : accessor.slice(dot + 1);
}

export function encryptBatchToken(batchKey: Buffer, payload: unknown, namespaceId: string): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', batchKey, nonce);
  cipher.setAAD(BATCH_AAD);
  const ct = Buffer.concat([cipher.update(JSON.stringify(payload), 'utf8'), cipher.final()]);
  const blob = Buffer.concat([nonce, ct, cipher.getAuthTag()]).toString('base64url');
  return `${BATCH_PREFIX}${blob}${nsSuffix(namespaceId)}`;
}

/** The decrypted payload, or null when the blob is malformed or fails authentication. */
export function decryptBatchToken(batchKey: Buffer, id: string): unknown {
  if (!id.startsWith(BATCH_PREFIX)) return null;
  const body = id.slice(BATCH_PREFIX.length);
  const dot = body.indexOf('.');
  const raw = Buffer.from(dot === -1 ? body : body.slice(0, dot), 'base64url');
  if (raw.length < 12 + 16 + 2) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', batchKey, raw.subarray(0, 12));
    decipher.setAAD(BATCH_AAD);
    decipher.setAuthTag(raw.subarray(raw.length - 16));
    const pt = Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]);
    return JSON.parse(pt.toString('utf8')) as unknown;
  } catch {
    return null;
  }
}
