/**
 * OpenSSH certificates (PROTOCOL.certkeys), written here and signed with
 * node:crypto. sshpk reads keys and certificates for us, but its certificate
 * writer cannot serve an SSH CA: it signs RSA only with SHA-1 (`ssh-rsa`,
 * refused by OpenSSH 8.8+), encodes an ECDSA signature wrongly whenever r has
 * a leading zero byte (half of all P-521 signatures), and cannot write a
 * certificate without principals.
 */
import { createHash, sign as cryptoSign, type KeyObject } from 'node:crypto';
import { takeRandom } from '@strongroom/sdk-plugin';
import { reader, wireWriter, type WireWriter } from './wire.js';
import type { KeyKind, SubjectKey } from './keys.js';

/** The signing half of an issuer, ready to use. */
export interface CaSigner {
  kind: KeyKind;
  /** ECDSA curve size (256, 384, 521); RSA modulus size; 256 for ed25519. */
  bits: number;
  /** The CA public key blob written into every certificate. */
  blob: Buffer;
  key: KeyObject;
}

/** Signature algorithms a role may ask of an RSA CA (`algorithm_signer`). */
export type RsaAlgorithm = 'ssh-rsa' | 'rsa-sha2-256' | 'rsa-sha2-512';

export interface CertificateInput {
  subject: SubjectKey;
  serial: bigint;
  certType: 'user' | 'host';
  keyId: string;
  principals: string[];
  /** Unix seconds. */
  validAfter: number;
  validBefore: number;
  criticalOptions: Record<string, string>;
  extensions: Record<string, string>;
}

const CERT_TYPE = { user: 1, host: 2 } as const;

/** A random serial: 64 random bits, as a uint64. */
export function randomSerial(): bigint {
  return takeRandom(8).readBigUInt64BE();
}

/**
 * Options and extensions as one `string`: sorted by name (OpenSSH requires
 * it), each value wrapped as a string inside the data field, an empty value as
 * empty data.
 */
function writeOptions(w: WireWriter, m: Record<string, string>): void {
  const list = w.begin();
  for (const name of Object.keys(m).sort()) {
    const value = m[name] as string;
    w.string(name);
    if (value === '') {
      w.u32(0);
    } else {
      const data = w.begin();
      w.string(value);
      w.end(data);
    }
  }
  w.end(list);
}

/** The signed certificate as an authorized_keys line ("<type>-cert-v01@openssh.com AAAA...\n"). */
export function signCertificate(input: CertificateInput, ca: CaSigner, rsaAlgorithm: RsaAlgorithm = 'rsa-sha2-256'): string {
  const r = reader(input.subject.blob);
  r.string(); // the key type; the certificate type replaces it
  const certType = `${input.subject.sshType}-cert-v01@openssh.com`;
  const w = wireWriter();
  w.string(certType);
  w.string(takeRandom(32));
  w.raw(r.rest());
  w.u64(input.serial);
  w.u32(CERT_TYPE[input.certType]);
  w.string(input.keyId);
  const principals = w.begin();
  for (const p of input.principals) w.string(p);
  w.end(principals);
  w.u64(BigInt(Math.max(0, input.validAfter)));
  w.u64(BigInt(Math.max(0, input.validBefore)));
  writeOptions(w, input.criticalOptions);
  writeOptions(w, input.extensions);
  w.string(''); // reserved
  w.string(ca.blob);
  writeSignature(w, w.bytes(), ca, rsaAlgorithm);
  return `${certType} ${w.bytes().toString('base64')}\n`;
}

/** Appends the SSH signature blob (RFC 4253 6.6, RFC 8332, RFC 5656, RFC 8709) over `data` as a `string`. */
function writeSignature(w: WireWriter, data: Buffer, ca: CaSigner, rsaAlgorithm: RsaAlgorithm): void {
  // Sign first: `data` is the writer's own buffer, valid until the next write.
  let name: string;
  let sig: Buffer;
  switch (ca.kind) {
    case 'ed25519':
      name = 'ssh-ed25519';
      sig = cryptoSign(null, data, ca.key);
      break;
    case 'rsa':
      name = rsaAlgorithm;
      sig = cryptoSign(rsaAlgorithm === 'ssh-rsa' ? 'sha1' : rsaAlgorithm === 'rsa-sha2-512' ? 'sha512' : 'sha256', data, ca.key);
      break;
    case 'ecdsa': {
      const hash = ca.bits === 256 ? 'sha256' : ca.bits === 384 ? 'sha384' : 'sha512';
      const raw = cryptoSign(hash, data, { key: ca.key, dsaEncoding: 'ieee-p1363' });
      const half = raw.length / 2;
      const blob = w.begin();
      w.string(`ecdsa-sha2-nistp${ca.bits}`);
      const rs = w.begin();
      w.mpint(raw.subarray(0, half));
      w.mpint(raw.subarray(half));
      w.end(rs);
      w.end(blob);
      return;
    }
  }
  const blob = w.begin();
  w.string(name);
  w.string(sig);
  w.end(blob);
}

/** `{{public_key_hash}}` of key_id_format: hex SHA-256 of the signed key's blob. */
export function publicKeyHash(subject: SubjectKey): string {
  return createHash('sha256').update(subject.blob).digest('hex');
}
