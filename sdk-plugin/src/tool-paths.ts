/**
 * Keyless tools served at two places with one behaviour: transit's
 * `hash` and `random` and the core's `sys/tools/hash` and `sys/tools/random`
 * (Vault documents them as the same endpoints). Each caller picks its pattern.
 */
import { createHash, randomBytes } from 'node:crypto';
import { badRequest } from './errors.js';
import { definePath } from './define-backend.js';
import { f } from './fields.js';

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

const ALGOS = HASH_ENDPOINT_ALGORITHMS as unknown as readonly [string, ...string[]];
const MAX_RANDOM_BYTES = 128 * 1024;

/** `hash{/:algorithm}` (or the caller's pattern with an `algorithm` capture): a digest of base64 input. */
export function hashToolPath(pattern: string) {
  return definePath({
    pattern,
    fields: {
      algorithm: f.enum(ALGOS).default('sha2-256').describe('Hash algorithm.'),
      input: f.sensitive(f.base64()).describe('Base64 input.'),
      format: f.enum(['hex', 'base64']).default('hex').describe('Output encoding.'),
    },
    operations: {
      update: {
        summary: 'Hash data.',
        handler: async (req) => {
          const sum = createHash(nodeHash(req.data.algorithm as HashAlgorithm)).update(req.data.input).digest(req.data.format);
          return { data: { sum } };
        },
      },
    },
    synopsis: 'Generate a hash sum of the input.',
  });
}

/** `random{/:source}{/:urlbytes}`: random bytes. A single numeric segment is the byte count (`random/64`). */
export function randomToolPath(pattern: string) {
  return definePath({
    pattern,
    fields: {
      source: f.string().optional().describe('`platform` (default) or `all`.'),
      urlbytes: f.string().optional().describe('Byte count given in the URL.'),
      bytes: f.int({ min: 1, max: MAX_RANDOM_BYTES }).default(32).describe('Number of bytes (default 32).'),
      format: f.enum(['base64', 'hex']).default('base64').describe('Output encoding.'),
    },
    operations: {
      update: {
        summary: 'Generate random bytes.',
        handler: async (req) => {
          let { source, urlbytes } = req.data;
          let bytes = req.data.bytes;
          if (source !== undefined && /^\d+$/.test(source) && urlbytes === undefined) {
            urlbytes = source;
            source = undefined;
          }
          if (urlbytes !== undefined) {
            if (!/^\d+$/.test(urlbytes)) throw badRequest('field "bytes": invalid integer in the URL');
            bytes = Number(urlbytes);
          }
          if (bytes < 1 || bytes > MAX_RANDOM_BYTES) throw badRequest(`field "bytes": must be between 1 and ${MAX_RANDOM_BYTES}`);
          // Every source is the platform CSPRNG here: there is no seal-backed entropy source in this service.
          if (source !== undefined && source !== 'platform' && source !== 'all') {
            throw badRequest('field "source": must be "platform" or "all"');
          }
          return { data: { random_bytes: randomBytes(bytes).toString(req.data.format) } };
        },
      },
    },
    synopsis: 'Generate random bytes.',
  });
}
