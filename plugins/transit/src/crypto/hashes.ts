/** Hash algorithm names: the table lives in the SDK (shared with sys/tools/hash); BYOK's own names stay here. */
export { HASH_ALGORITHMS, HASH_ENDPOINT_ALGORITHMS, isHashAlgorithm, nodeHash, type HashAlgorithm } from '@strongroom/sdk-plugin';

/** BYOK `hash_function` values (upper case as in the API) to node:crypto names. */
export const OAEP_HASHES: Record<string, string> = {
  SHA1: 'sha1',
  SHA224: 'sha224',
  SHA256: 'sha256',
  SHA384: 'sha384',
  SHA512: 'sha512',
};
