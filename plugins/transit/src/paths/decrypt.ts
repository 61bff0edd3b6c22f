/** `decrypt/:name`. */
import { badRequest, definePath, f } from '@strongroom/sdk-plugin';
import { decrypt } from '../keys/operations.js';
import { batchInput, type BatchItem, optB64, requireKey, runBatch, type TransitDeps } from './common.js';

export function decryptPath(deps: TransitDeps) {
  return definePath({
    pattern: 'decrypt/:name',
    fields: {
      name: f.string().describe('Name of the key.'),
      ciphertext: f.string().optional().describe('Ciphertext (`service:v<N>:...`).'),
      context: f.string().optional().describe('Base64 context, for derived keys.'),
      associated_data: f.string().optional().describe('Base64 associated data given at encryption.'),
      nonce: f.string().optional().describe('Accepted for compatibility; the nonce travels in the ciphertext.'),
      reference: f.string().optional().describe('Echoed in the matching batch result.'),
      batch_input: f.any().optional().describe('List of items with ciphertext, context, reference...'),
      partial_failure_response_code: f.int({ min: 200, max: 599 }).default(400).describe('Status when some batch items fail.'),
    },
    operations: {
      update: {
        summary: 'Decrypt data.',
        handler: async (req) => {
          const d = req.data;
          const batch = batchInput(d.batch_input);
          const key = await requireKey(deps.store, d.name);
          const one = (i: BatchItem) => {
            if (typeof i.ciphertext !== 'string' || i.ciphertext === '') throw badRequest('missing ciphertext to decrypt');
            const { plaintext } = decrypt(key, {
              ciphertext: i.ciphertext,
              context: optB64(i.context, 'context'),
              associatedData: optB64(i.associated_data, 'associated_data'),
            });
            return { plaintext: plaintext.toString('base64') };
          };
          if (!batch) return { data: one({ ciphertext: d.ciphertext, context: d.context, associated_data: d.associated_data }) };
          return runBatch(batch, one, d.partial_failure_response_code);
        },
      },
    },
    synopsis: 'Decrypt a ciphertext (or a batch) with a named key.',
  });
}
