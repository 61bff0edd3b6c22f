/** Fields and option parsing shared by sign and verify (Vault's documented parameters). */
import { badRequest, f } from '@strongroom/sdk-plugin';
import { HASH_ALGORITHMS, type HashAlgorithm, isHashAlgorithm } from '../crypto/hashes.js';
import type { SignInput } from '../keys/operations.js';
import { optB64 } from './common.js';

export const signFields = {
  name: f.string().describe('Name of the key.'),
  hash_algorithm: f.enum(Object.keys(HASH_ALGORITHMS) as [HashAlgorithm, ...HashAlgorithm[]]).optional().describe('Hash algorithm (default sha2-256; ignored for ed25519).'),
  algorithm: f.deprecated(f.string().optional()).describe('Deprecated alias of hash_algorithm.'),
  input: f.sensitive(f.string().optional()).describe('Base64 input.'),
  key_version: f.int({ min: 0 }).default(0).describe('Version to sign with; 0 means latest.'),
  context: f.string().optional().describe('Base64 context, for derived ed25519 keys.'),
  prehashed: f.bool().default(false).describe('The input is already a digest (RSA pkcs1v15 only).'),
  signature_algorithm: f.enum(['pss', 'pkcs1v15']).default('pss').describe('RSA signature scheme.'),
  marshaling_algorithm: f.enum(['asn1', 'jws']).default('asn1').describe('ECDSA signature encoding.'),
  salt_length: f.string().default('auto').describe('RSA PSS salt length: auto (-1), hash (-2), or a number of bytes.'),
  reference: f.string().optional().describe('Echoed in the matching batch result.'),
  batch_input: f.any().optional().describe('List of items with input, context, reference...'),
};

export interface SignFieldValues {
  hash_algorithm?: HashAlgorithm | undefined;
  algorithm?: string | undefined;
  prehashed: boolean;
  signature_algorithm: 'pss' | 'pkcs1v15';
  marshaling_algorithm: 'asn1' | 'jws';
  salt_length: string;
}

export function hashOf(d: SignFieldValues): HashAlgorithm {
  const h = d.hash_algorithm ?? d.algorithm ?? 'sha2-256';
  if (!isHashAlgorithm(h)) throw badRequest(`field "hash_algorithm": unsupported algorithm ${h}`);
  return h;
}

export function signOptions(d: SignFieldValues): Omit<SignInput, 'input' | 'keyVersion' | 'context'> {
  let saltLength: SignInput['saltLength'];
  // Vault also takes Go's constants: -1 (rsa.PSSSaltLengthAuto) and -2 (rsa.PSSSaltLengthEqualsHash).
  const salt = d.salt_length.trim();
  if (salt === 'auto' || salt === '-1') saltLength = 'auto';
  else if (salt === 'hash' || salt === '-2') saltLength = 'hash';
  else if (/^\d+$/.test(salt)) saltLength = Number(salt);
  else throw badRequest('field "salt_length": must be auto (-1), hash (-2) or a non-negative integer');
  return {
    hashAlgorithm: hashOf(d),
    prehashed: d.prehashed,
    signatureAlgorithm: d.signature_algorithm,
    marshalingAlgorithm: d.marshaling_algorithm,
    saltLength,
  };
}

export function itemInput(i: Record<string, unknown>): Buffer {
  if (typeof i.input !== 'string') throw badRequest('missing input');
  return optB64(i.input, 'input') ?? Buffer.alloc(0);
}
