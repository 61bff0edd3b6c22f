/** `verify/:name{/:hash_algorithm}`: verify a signature, or an HMAC when `hmac` is given. */
import { badRequest, definePath, f } from '@strongroom/sdk-plugin';
import { verify, verifyHmac } from '../keys/operations.js';
import { batchInput, type BatchItem, optB64, requireKey, runBatch, type TransitDeps } from './common.js';
import { hashOf, itemInput, signFields, signOptions } from './sign-options.js';

export function verifyPath(deps: TransitDeps) {
  return definePath({
    pattern: 'verify/:name{/:hash_algorithm}',
    fields: {
      ...signFields,
      signature: f.string().optional().describe('Signature to check.'),
      hmac: f.string().optional().describe('HMAC to check (instead of a signature).'),
    },
    operations: {
      update: {
        summary: 'Verify a signature or an HMAC.',
        handler: async (req) => {
          const d = req.data;
          const key = await requireKey(deps.store, d.name);
          const opts = signOptions(d);
          const one = (i: BatchItem) => {
            const input = itemInput(i);
            const hasSig = typeof i.signature === 'string' && i.signature !== '';
            const hasHmac = typeof i.hmac === 'string' && i.hmac !== '';
            if (hasSig === hasHmac) throw badRequest('exactly one of signature or hmac must be given');
            if (hasHmac) return { valid: verifyHmac(key, { input, hmac: i.hmac as string, algorithm: hashOf(d) }) };
            return { valid: verify(key, { ...opts, input, signature: i.signature as string, context: optB64(i.context, 'context') }) };
          };
          const batch = batchInput(d.batch_input);
          if (!batch) return { data: one({ input: d.input, context: d.context, signature: d.signature, hmac: d.hmac }) };
          return runBatch(batch, one);
        },
      },
    },
    synopsis: 'Verify a signature or HMAC made with a named key.',
  });
}
