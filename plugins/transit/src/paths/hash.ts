/** `hash{/:algorithm}`: a digest of the input; no key involved. */
import { createHash } from 'node:crypto';
import { definePath, f } from '@strongroom/sdk-plugin';
import { HASH_ENDPOINT_ALGORITHMS, nodeHash } from '../crypto/hashes.js';

const ALGOS = HASH_ENDPOINT_ALGORITHMS as unknown as readonly [string, ...string[]];

export function hashPath() {
  return definePath({
    pattern: 'hash{/:algorithm}',
    fields: {
      algorithm: f.enum(ALGOS).default('sha2-256').describe('Hash algorithm.'),
      input: f.sensitive(f.base64()).describe('Base64 input.'),
      format: f.enum(['hex', 'base64']).default('hex').describe('Output encoding.'),
    },
    operations: {
      update: {
        summary: 'Hash data.',
        handler: async (req) => {
          const sum = createHash(nodeHash(req.data.algorithm as never)).update(req.data.input).digest(req.data.format);
          return { data: { sum } };
        },
      },
    },
    synopsis: 'Generate a hash sum of the input.',
  });
}
