/**
 * The static seal (OpenBao's `seal "static"`): auto-unseal with a 32-byte
 * AES-256-GCM key the operator supplies, no cloud KMS.
 *
 *   seal "static" {
 *     current_key_id  = "2026-11"
 *     current_key     = "file:///etc/strongroom/seal.key"   # or "env://SEAL_KEY"
 *     previous_key_id = "2026-05"                           # rotation: still unwraps
 *     previous_key    = "env://OLD_SEAL_KEY"
 *   }
 *
 * The file or variable holds the key raw (32 bytes), hex (64 characters) or
 * standard base64. What the seal wraps (the barrier's unseal key and the
 * recovery key) is stored outside the barrier as a record naming the key id,
 * its value an AES-256-GCM envelope whose associated data is the storage path
 * and the key id, so a record moved or relabelled fails to unwrap.
 *
 * Security invariants: key bytes live only in this closure (never in the
 * config object's enumerable fields, a log line or an error message); every
 * error names the stanza and the field, never the value; a key file readable
 * by group or others is reported as a warning.
 */
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { StrongroomError, isStdBase64 } from '@strongroom/sdk-plugin/host';
import { KEY_BYTES } from '../barrier/barrier.js';
import { decrypt, encrypt } from '../barrier/envelope.js';

export const STANZA = 'seal "static"';

/** A wrong, missing or unusable seal key: the server must stop, with this message. */
export class SealKeyError extends StrongroomError {
  constructor(message: string) {
    super('internal', `${STANZA}: ${message}`);
    this.name = 'SealKeyError';
  }
}

/** The stanza as written (key sources, not keys). */
export interface StaticSealStanza {
  currentKeyId: string;
  currentKey: string;
  previousKeyId?: string;
  previousKey?: string;
  /** `disabled = "true"`: migrating away from this seal (back to Shamir). */
  disabled: boolean;
}

export interface StaticSeal {
  readonly type: 'static';
  readonly disabled: boolean;
  readonly currentKeyId: string;
  /** Loose key-file permissions and the like, for the server's log. */
  readonly warnings: readonly string[];
  /** A record of `plaintext` under the current key, bound to `path`. */
  wrap(path: string, plaintext: Uint8Array): Buffer;
  /**
   * The plaintext of a record, and whether it was under the previous key (the
   * caller then wraps it again under the current one). Throws SealKeyError
   * naming the key when it is unknown or does not open the record.
   */
  unwrap(path: string, record: Uint8Array): { plaintext: Buffer; previous: boolean };
}

/** Where a `file://` or `env://` source says; the bytes and any warning. Never echoes a value. */
function readSource(field: string, source: string, warnings: string[]): Buffer {
  let text: Buffer;
  if (source.startsWith('file://')) {
    let path: string;
    try {
      path = fileURLToPath(source);
    } catch {
      throw new SealKeyError(`${field}: "file://" must be followed by an absolute path, e.g. file:///etc/strongroom/seal.key`);
    }
    try {
      const st = statSync(path);
      if (!st.isFile()) throw new SealKeyError(`${field}: "${path}" is not a file`);
      if ((st.mode & 0o077) !== 0) {
        warnings.push(`${STANZA}: ${field}: the key file "${path}" is readable by group or others (mode ${(st.mode & 0o777).toString(8)}); restrict it to the server's user (chmod 600)`);
      }
      text = readFileSync(path);
    } catch (err) {
      if (err instanceof SealKeyError) throw err;
      throw new SealKeyError(`${field}: the key file "${path}" cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  } else if (source.startsWith('env://')) {
    const name = source.slice('env://'.length);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new SealKeyError(`${field}: "env://" must be followed by an environment variable name`);
    const v = process.env[name];
    if (v === undefined || v === '') throw new SealKeyError(`${field}: the environment variable ${name} is not set`);
    text = Buffer.from(v, 'utf8');
  } else {
    throw new SealKeyError(`${field}: must be "file://PATH" or "env://NAME" (a key written into the configuration file is refused)`);
  }
  return text;
}

/** Raw 32 bytes, or 64 hex characters, or standard base64 of 32 bytes (surrounding whitespace ignored). */
function decodeKey(field: string, raw: Buffer): Buffer {
  if (raw.length === KEY_BYTES) return Buffer.from(raw);
  const text = raw.toString('latin1').trim();
  let key: Buffer | null = null;
  if (/^[0-9a-fA-F]{64}$/.test(text)) key = Buffer.from(text, 'hex');
  else if (isStdBase64(text)) key = Buffer.from(text, 'base64');
  if (key && key.length === KEY_BYTES) return key;
  key?.fill(0);
  throw new SealKeyError(`${field}: the key must be ${KEY_BYTES} bytes (raw, 64 hex characters or base64); this one is not`);
}

function loadKey(field: string, source: string, warnings: string[]): Buffer {
  const raw = readSource(field, source, warnings);
  try {
    return decodeKey(field, raw);
  } finally {
    raw.fill(0);
  }
}

interface Record_ {
  key_id: string;
  value: string;
}

const aad = (path: string, keyId: string) => `${path}#${keyId}`;

/** Reads the stanza's keys now: a missing, unreadable or malformed key throws SealKeyError. */
export function loadStaticSeal(stanza: StaticSealStanza): StaticSeal {
  const warnings: string[] = [];
  const keys = new Map<string, Buffer>();
  keys.set(stanza.currentKeyId, loadKey('current_key', stanza.currentKey, warnings));
  if (stanza.previousKeyId !== undefined && stanza.previousKey !== undefined) {
    keys.set(stanza.previousKeyId, loadKey('previous_key', stanza.previousKey, warnings));
  }
  const fieldOf = (id: string) => (id === stanza.currentKeyId ? 'current_key' : 'previous_key');
  return {
    type: 'static',
    disabled: stanza.disabled,
    currentKeyId: stanza.currentKeyId,
    warnings,
    wrap(path, plaintext) {
      const env = encrypt(keys.get(stanza.currentKeyId)!, 0, aad(path, stanza.currentKeyId), plaintext);
      const rec: Record_ = { key_id: stanza.currentKeyId, value: env.toString('base64') };
      return Buffer.from(JSON.stringify(rec), 'utf8');
    },
    unwrap(path, record) {
      let rec: Record_;
      try {
        rec = JSON.parse(Buffer.from(record).toString('utf8')) as Record_;
      } catch {
        throw new SealKeyError(`the stored record at ${path} is malformed`);
      }
      if (typeof rec?.key_id !== 'string' || typeof rec.value !== 'string') throw new SealKeyError(`the stored record at ${path} is malformed`);
      const key = keys.get(rec.key_id);
      if (!key) {
        throw new SealKeyError(
          `the stored key is wrapped under key id "${rec.key_id}", which is neither current_key_id ("${stanza.currentKeyId}")${stanza.previousKeyId !== undefined ? ` nor previous_key_id ("${stanza.previousKeyId}")` : ''}: give that key as previous_key`,
        );
      }
      const plaintext = decrypt(key, aad(path, rec.key_id), Buffer.from(rec.value, 'base64'));
      if (plaintext === null) throw new SealKeyError(`${fieldOf(rec.key_id)} (key id "${rec.key_id}") does not unwrap the stored key: wrong key`);
      return { plaintext, previous: rec.key_id !== stanza.currentKeyId };
    },
  };
}
