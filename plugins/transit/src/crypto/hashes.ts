/** Hash algorithm names of the API mapped to node:crypto digest names. */

export const HASH_ALGORITHMS = {
  sha1: 'sha1',
  'sha2-224': 'sha224',
  'sha2-256': 'sha256',
  'sha2-384': 'sha384',
  'sha2-512': 'sha512',
  'sha3-224': 'sha3-224',
  'sha3-256': 'sha3-256',
  'sha3-384': 'sha3-384',
  'sha3-512': 'sha3-512',
} as const;

export type HashAlgorithm = keyof typeof HASH_ALGORITHMS;

/** The eight algorithms of the hash and hmac endpoints (sha1 is for sign/verify and BYOK only). */
export const HASH_ENDPOINT_ALGORITHMS = Object.keys(HASH_ALGORITHMS).filter((a) => a !== 'sha1') as HashAlgorithm[];

export function isHashAlgorithm(a: string): a is HashAlgorithm {
  return Object.prototype.hasOwnProperty.call(HASH_ALGORITHMS, a);
}

export function nodeHash(a: HashAlgorithm): string {
  return HASH_ALGORITHMS[a];
}

/** BYOK `hash_function` values (upper case as in the API) to node:crypto names. */
export const OAEP_HASHES: Record<string, string> = {
  SHA1: 'sha1',
  SHA224: 'sha224',
  SHA256: 'sha256',
  SHA384: 'sha384',
  SHA512: 'sha512',
};
