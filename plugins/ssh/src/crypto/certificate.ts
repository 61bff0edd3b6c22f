/**
 * OpenSSH certificates (PROTOCOL.certkeys), written here and signed with
 * node:crypto. sshpk reads keys and certificates for us, but its certificate
 * writer cannot serve an SSH CA: it signs RSA only with SHA-1 (`ssh-rsa`,
 * refused by OpenSSH 8.8+), encodes an ECDSA signature wrongly whenever r has
 * a leading zero byte (half of all P-521 signatures), and cannot write a
 * certificate without principals.
 */
import { createHash, randomBytes, sign as cryptoSign, type KeyObject } from 'node:crypto';
import { mpint, reader, str, u32, u64 } from './wire.js';
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
  return randomBytes(8).readBigUInt64BE();
}

/**
 * Options and extensions: sorted by name (OpenSSH requires it), each value
 * wrapped as a string inside the data field, an empty value as empty data.
 */
function optionList(m: Record<string, string>): Buffer {
  const names = Object.keys(m).sort();
  return Buffer.concat(names.map((n) => Buffer.concat([str(n), str(m[n] === '' ? Buffer.alloc(0) : str(m[n] as string))])));
}

/** The signed certificate as an authorized_keys line ("<type>-cert-v01@openssh.com AAAA...\n"). */
export function signCertificate(input: CertificateInput, ca: CaSigner, rsaAlgorithm: RsaAlgorithm = 'rsa-sha2-256'): string {
  const r = reader(input.subject.blob);
  r.string(); // the key type; the certificate type replaces it
  const certType = `${input.subject.sshType}-cert-v01@openssh.com`;
  const tbs = Buffer.concat([
    str(certType),
    str(randomBytes(32)),
    r.rest(),
    u64(input.serial),
    u32(CERT_TYPE[input.certType]),
    str(input.keyId),
    str(Buffer.concat(input.principals.map((p) => str(p)))),
    u64(BigInt(Math.max(0, input.validAfter))),
    u64(BigInt(Math.max(0, input.validBefore))),
    str(optionList(input.criticalOptions)),
    str(optionList(input.extensions)),
    str(Buffer.alloc(0)),
    str(ca.blob),
  ]);
  const cert = Buffer.concat([tbs, str(signBlob(tbs, ca, rsaAlgorithm))]);
  return `${certType} ${cert.toString('base64')}\n`;
}

/** An SSH signature blob (RFC 4253 6.6, RFC 8332, RFC 5656, RFC 8709) over `data`. */
function signBlob(data: Buffer, ca: CaSigner, rsaAlgorithm: RsaAlgorithm): Buffer {
  switch (ca.kind) {
    case 'ed25519':
      return Buffer.concat([str('ssh-ed25519'), str(cryptoSign(null, data, ca.key))]);
    case 'rsa': {
      const hash = rsaAlgorithm === 'ssh-rsa' ? 'sha1' : rsaAlgorithm === 'rsa-sha2-512' ? 'sha512' : 'sha256';
      return Buffer.concat([str(rsaAlgorithm), str(cryptoSign(hash, data, ca.key))]);
    }
    case 'ecdsa': {
      const hash = ca.bits === 256 ? 'sha256' : ca.bits === 384 ? 'sha384' : 'sha512';
      const raw = cryptoSign(hash, data, { key: ca.key, dsaEncoding: 'ieee-p1363' });
      const half = raw.length / 2;
      const rs = Buffer.concat([mpint(raw.subarray(0, half)), mpint(raw.subarray(half))]);
      return Buffer.concat([str(`ecdsa-sha2-nistp${ca.bits}`), str(rs)]);
    }
  }
}

/** `{{public_key_hash}}` of key_id_format: hex SHA-256 of the signed key's blob. */
export function publicKeyHash(subject: SubjectKey): string {
  return createHash('sha256').update(subject.blob).digest('hex');
}
