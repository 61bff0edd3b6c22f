/**
 * SSH keys: CA key pairs (generated with node:crypto or submitted), the keys
 * callers submit for signing, and the key pairs `issue` makes. sshpk reads and
 * writes the formats (OpenSSH public lines, OpenSSH/PEM private keys);
 * node:crypto generates and signs.
 *
 * Security: a CA private key leaves this module only as the PKCS#8 PEM that
 * the store writes through the barrier; it is never returned by any path.
 */
import { createPrivateKey, createPublicKey, generateKeyPair, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import sshpk from 'sshpk';
import { badRequest } from '@strongroom/sdk-plugin';
import { reader } from './wire.js';

const generateKeyPairAsync = promisify(generateKeyPair);

/** The key algorithms this engine signs with and issues. */
export type KeyKind = 'rsa' | 'ecdsa' | 'ed25519';

export interface GeneratedKey {
  /** OpenSSH public key line, "ssh-ed25519 AAAA..." without a comment. */
  publicKey: string;
  /** The private key as Node reads it (PKCS#8 PEM). */
  privatePkcs8: string;
  kind: KeyKind;
  bits: number;
  key: KeyObject;
}

const CURVES: Record<number, string> = { 256: 'P-256', 384: 'P-384', 521: 'P-521' };
const CURVE_BITS: Record<string, number> = { 'ecdsa-sha2-nistp256': 256, 'ecdsa-sha2-nistp384': 384, 'ecdsa-sha2-nistp521': 521 };

/**
 * What `key_type` and `key_bits` of config/ca and issuers/import mean
 * (`ssh-rsa`/`rsa`, the three ECDSA identifiers, `ec` with 256/384/521,
 * `ssh-ed25519`/`ed25519`), as a kind and size; a 400 names the bad field.
 */
export function caKeySpec(keyType: string, keyBits: number): { kind: KeyKind; bits: number } {
  switch (keyType) {
    case 'ssh-rsa':
    case 'rsa': {
      const bits = keyBits === 0 ? 4096 : keyBits;
      if (bits < 2048) throw badRequest(`field "key_bits": refusing to generate a weak RSA key: ${bits} bits < 2048 bits`);
      if (bits > 8192) throw badRequest(`field "key_bits": RSA keys of more than 8192 bits are not generated`);
      return { kind: 'rsa', bits };
    }
    case 'ecdsa-sha2-nistp256':
    case 'ecdsa-sha2-nistp384':
    case 'ecdsa-sha2-nistp521':
      return { kind: 'ecdsa', bits: CURVE_BITS[keyType] as number };
    case 'ec': {
      const bits = keyBits === 0 ? 256 : keyBits;
      if (!CURVES[bits]) throw badRequest(`field "key_bits": unknown ECDSA key size ${keyBits}; use 256, 384 or 521`);
      return { kind: 'ecdsa', bits };
    }
    case 'ssh-ed25519':
    case 'ed25519':
      return { kind: 'ed25519', bits: 256 };
    default:
      throw badRequest(`field "key_type": unknown SSH key pair algorithm "${keyType}"`);
  }
}

/**
 * What `key_type` and `key_bits` of `issue` mean: `rsa` (2048 default, 3072,
 * 4096), `ec` (256 default, 384, 521), `ed25519` (bits ignored).
 */
export function issueKeySpec(keyType: string, keyBits: number): { kind: KeyKind; bits: number } {
  switch (keyType) {
    case 'rsa': {
      const bits = keyBits === 0 ? 2048 : keyBits;
      if (![2048, 3072, 4096].includes(bits)) throw badRequest(`field "key_bits": RSA keys are 2048, 3072 or 4096 bits, not ${keyBits}`);
      return { kind: 'rsa', bits };
    }
    case 'ec': {
      const bits = keyBits === 0 ? 256 : keyBits;
      if (!CURVES[bits]) throw badRequest(`field "key_bits": EC keys are 256, 384 or 521 bits, not ${keyBits}`);
      return { kind: 'ecdsa', bits };
    }
    case 'ed25519':
      return { kind: 'ed25519', bits: 256 };
    default:
      throw badRequest(`field "key_type": must be rsa, ec or ed25519, not "${keyType}"`);
  }
}

/** A fresh key pair, generated off the event loop (RSA 4096 takes a second of CPU). */
export async function generateKey(spec: { kind: KeyKind; bits: number }): Promise<GeneratedKey> {
  const { privateKey } =
    spec.kind === 'rsa'
      ? await generateKeyPairAsync('rsa', { modulusLength: spec.bits })
      : spec.kind === 'ecdsa'
        ? await generateKeyPairAsync('ec', { namedCurve: CURVES[spec.bits] as string })
        : await generateKeyPairAsync('ed25519');
  const privatePkcs8 = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return { publicKey: publicLineOf(privateKey), privatePkcs8, kind: spec.kind, bits: spec.bits, key: privateKey };
}

/** OpenSSH public key line of a node:crypto key (private or public). */
function publicLineOf(key: KeyObject): string {
  const spki = createPublicKey(key).export({ type: 'spki', format: 'pem' }).toString();
  return openSshLine(sshpk.parseKey(spki, 'pem'));
}

/** "type base64" without sshpk's "(unnamed)" comment. */
function openSshLine(k: sshpk.Key): string {
  const blob = k.toBuffer('rfc4253', {});
  return `${sshTypeOf(blob)} ${blob.toString('base64')}`;
}

function sshTypeOf(blob: Buffer): string {
  return reader(blob).string().toString('latin1');
}

/**
 * How `issue` hands a private key out, as Vault does: PKCS#1 PEM for RSA,
 * SEC1 PEM for ECDSA, the OpenSSH format for ed25519 (the only one OpenSSH reads for it).
 */
export function exportIssuedPrivateKey(g: GeneratedKey): string {
  if (g.kind === 'rsa') return g.key.export({ type: 'pkcs1', format: 'pem' }).toString();
  if (g.kind === 'ecdsa') return g.key.export({ type: 'sec1', format: 'pem' }).toString();
  return sshpk.parsePrivateKey(g.privatePkcs8, 'pem').toString('openssh');
}

/** A node:crypto key from an sshpk private key (sshpk's own ed25519 PKCS#8 is not what OpenSSL reads). */
function nodeKeyOf(k: sshpk.PrivateKey): KeyObject {
  if (k.type === 'ed25519') {
    const part = (k as unknown as { part: Record<string, { data: Buffer }> }).part;
    const seed = part.k?.data;
    const pub = part.A?.data;
    if (!seed || !pub) throw new Error('ed25519 key without its parts');
    return createPrivateKey({ format: 'jwk', key: { kty: 'OKP', crv: 'Ed25519', d: seed.toString('base64url'), x: pub.toString('base64url') } });
  }
  return createPrivateKey(k.toString('pkcs8'));
}

/**
 * A submitted CA pair (`private_key` in OpenSSH or PEM form, `public_key` as
 * an OpenSSH line): both must parse, be RSA/ECDSA/ed25519, and match.
 */
export function importCaPair(privateText: string, publicText: string): GeneratedKey {
  let priv: sshpk.PrivateKey;
  try {
    priv = sshpk.parsePrivateKey(privateText, 'auto');
  } catch (e) {
    const encrypted = e instanceof Error && e.name === 'KeyEncryptedError';
    throw badRequest(`field "private_key": ${encrypted ? 'encrypted private keys are not accepted' : 'could not parse the private key'}`);
  }
  let pub: sshpk.Key;
  try {
    pub = sshpk.parseKey(publicText, 'auto');
  } catch {
    throw badRequest('field "public_key": could not parse the public key');
  }
  if (priv.type !== 'rsa' && priv.type !== 'ecdsa' && priv.type !== 'ed25519') {
    throw badRequest(`field "private_key": ${priv.type} CA keys are not supported; use RSA, ECDSA or ed25519`);
  }
  if (priv.type === 'rsa' && priv.size < 2048) throw badRequest(`field "private_key": refusing a weak RSA CA key of ${priv.size} bits`);
  const a = priv.toPublic().fingerprint('sha256').toString();
  const b = pub.fingerprint('sha256').toString();
  if (a !== b) throw badRequest('field "public_key": does not match the private key');
  const key = nodeKeyOf(priv);
  return {
    publicKey: openSshLine(pub),
    privatePkcs8: key.export({ type: 'pkcs8', format: 'pem' }).toString(),
    kind: priv.type,
    bits: priv.size,
    key,
  };
}

/** A caller's public key to certify. */
export interface SubjectKey {
  /** The OpenSSH key type ("ssh-rsa", "ecdsa-sha2-nistp256", "ssh-ed25519", "ssh-dss"). */
  sshType: string;
  /** Family as allowed_user_key_lengths names it: rsa, dsa, ecdsa, ed25519. */
  family: 'rsa' | 'dsa' | 'ecdsa' | 'ed25519';
  bits: number;
  /** The RFC 4253 public key blob. */
  blob: Buffer;
}

/** Parses `public_key` of sign: one OpenSSH public key line (a certificate is refused). */
export function parseSubjectKey(text: string, field = 'public_key'): SubjectKey {
  const trimmed = text.trim();
  if (/^\S+-cert-v01@openssh\.com\s/.test(trimmed)) throw badRequest(`field "${field}": a certificate cannot be signed; send the public key`);
  let k: sshpk.Key;
  try {
    k = sshpk.parseKey(trimmed, 'ssh');
  } catch {
    throw badRequest(`field "${field}": failed to parse the key as an OpenSSH public key`);
  }
  const family = k.type as string;
  if (family !== 'rsa' && family !== 'dsa' && family !== 'ecdsa' && family !== 'ed25519') {
    throw badRequest(`field "${field}": keys of type ${family} are not signed`);
  }
  const blob = k.toBuffer('rfc4253', {});
  return { sshType: sshTypeOf(blob), family, bits: k.size, blob };
}

/** The blob and type of an OpenSSH public key line we produced (a CA's). */
export function publicBlobOf(line: string): { sshType: string; blob: Buffer } {
  const blob = sshpk.parseKey(line, 'ssh').toBuffer('rfc4253', {});
  return { sshType: sshTypeOf(blob), blob };
}
