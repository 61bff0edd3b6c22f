/** `hmac/:name{/:algorithm}`: HMAC under a version's own HMAC secret (or an hmac key's material). */
import { badRequest, definePath, f } from '@strongroom/sdk-plugin';
import { HASH_ENDPOINT_ALGORITHMS } from '../crypto/hashes.js';
import { hmac } from '../keys/operations.js';
import { batchInput, type BatchItem, optB64, requireKey, runBatch, type TransitDeps } from './common.js';

const ALGOS = HASH_ENDPOINT_ALGORITHMS as unknown as readonly [string, ...string[]];

export function hmacPath(deps: TransitDeps) {
  return definePath({
    pattern: 'hmac/:name{/:algorithm}',
    fields: {
      name: f.string().describe('Name of the key.'),
      algorithm: f.enum(ALGOS).default('sha2-256').describe('Hash algorithm.'),
      input: f.sensitive(f.string().optional()).describe('Base64 input.'),
      key_version: f.int({ min: 0 }).default(0).describe('Version to use; 0 means latest.'),
      reference: f.string().optional().describe('Echoed in the matching batch result.'),
      batch_input: f.any().optional().describe('List of items with input and reference.'),
    },
    operations: {
      update: {
        summary: 'Generate an HMAC.',
        handler: async (req) => {
          const d = req.data;
          const key = await requireKey(deps.store, d.name);
          const one = (i: BatchItem) => {
            if (typeof i.input !== 'string') throw badRequest('missing input for HMAC');
            return {
              hmac: hmac(key, { input: optB64(i.input, 'input') ?? Buffer.alloc(0), algorithm: d.algorithm as never, keyVersion: d.key_version }),
            };
          };
          const batch = batchInput(d.batch_input);
          if (!batch) return { data: one({ input: d.input }) };
          return runBatch(batch, one);
        },
      },
    },
    synopsis: 'Generate an HMAC of the input with a named key.',
  });
}
