/**
 * The `service:v<N>:<base64>` envelope shared by ciphertexts, signatures and
 * HMACs. Parsing failures are the caller's bad input, so they are 400s.
 * Vault's `vault:v<N>:` is read too (the payload is the same), so data made by
 * Vault's transit decrypts and verifies once its key is imported; what this
 * engine writes always carries `service:v<N>:` (the specification's prefix).
 */
import { badRequest, isRawUrlBase64, isStdBase64 } from '@strongroom/sdk-plugin';

const PREFIX = 'service:v';
const VAULT_PREFIX = 'vault:v';

export function encodeVersioned(version: number, payload: string): string {
  return `${PREFIX}${version}:${payload}`;
}

export interface Versioned {
  version: number;
  payload: string;
}

/** Splits `service:v<N>:<payload>` (or Vault's `vault:v<N>:<payload>`); `what` names the value in errors ("ciphertext", "signature", "hmac"). */
export function decodeVersioned(value: string, what = 'ciphertext'): Versioned {
  const prefix = typeof value !== 'string' ? null : value.startsWith(PREFIX) ? PREFIX : value.startsWith(VAULT_PREFIX) ? VAULT_PREFIX : null;
  if (prefix === null) throw badRequest(`invalid ${what}: no prefix`);
  const rest = value.slice(prefix.length);
  const colon = rest.indexOf(':');
  if (colon <= 0) throw badRequest(`invalid ${what}: wrong number of fields`);
  const vs = rest.slice(0, colon);
  if (!/^[0-9]{1,9}$/.test(vs)) throw badRequest(`invalid ${what}: version number could not be decoded`);
  const version = Number(vs);
  if (version < 1) throw badRequest(`invalid ${what}: version number could not be decoded`);
  return { version, payload: rest.slice(colon + 1) };
}


/** Strict standard base64 (padding required), as Go's StdEncoding; `field` names the input in the error. */
export function decodeBase64(value: string, field: string): Buffer {
  if (typeof value !== 'string' || !isStdBase64(value)) throw badRequest(`failed to base64-decode ${field}`);
  return Buffer.from(value, 'base64');
}

/** Unpadded base64url (JWS signatures). */
export function decodeBase64Url(value: string, field: string): Buffer {
  if (!isRawUrlBase64(value)) throw badRequest(`failed to base64url-decode ${field}`);
  return Buffer.from(value, 'base64url');
}
