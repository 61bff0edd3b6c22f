/** `sign/:name{/:hash_algorithm}`: sign with ed25519, ECDSA or RSA keys. */
import { definePath } from '@strongroom/sdk-plugin';
import { sign } from '../keys/operations.js';
import { batchInput, type BatchItem, optB64, requireKey, runBatch, type TransitDeps } from './common.js';
import { itemInput, signFields, signOptions } from './sign-options.js';

export function signPath(deps: TransitDeps) {
  return definePath({
    pattern: 'sign/:name{/:hash_algorithm}',
    fields: signFields,
    operations: {
      update: {
        summary: 'Sign data.',
        handler: async (req) => {
          const d = req.data;
          const key = await requireKey(deps.store, d.name);
          const opts = signOptions(d);
          const one = (i: BatchItem) => {
            const r = sign(key, { ...opts, input: itemInput(i), context: optB64(i.context, 'context'), keyVersion: d.key_version });
            return { signature: r.signature, key_version: r.version };
          };
          const batch = batchInput(d.batch_input);
          if (!batch) return { data: one({ input: d.input, context: d.context }) };
          return runBatch(batch, one);
        },
      },
    },
    synopsis: 'Sign the input with a named asymmetric key.',
    description: 'Signatures look like `service:v<N>:<base64>` (base64url for ECDSA `jws` marshaling).',
  });
}
