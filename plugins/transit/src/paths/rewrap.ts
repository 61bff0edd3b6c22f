/** `rewrap/:name`: re-encrypt under the latest (or a chosen) version. Never returns plaintext, so it may be delegated. */
import { badRequest, definePath, f } from '@strongroom/sdk-plugin';
import { decrypt, encrypt } from '../keys/operations.js';
import { batchInput, type BatchItem, optB64, optInt, requireKey, runBatch, type TransitDeps } from './common.js';
import { versionOf } from './encrypt.js';

export function rewrapPath(deps: TransitDeps) {
  return definePath({
    pattern: 'rewrap/:name',
    fields: {
      name: f.string().describe('Name of the key.'),
      ciphertext: f.string().optional().describe('Ciphertext to re-encrypt.'),
      context: f.string().optional().describe('Base64 context, for derived keys.'),
      associated_data: f.string().optional().describe('Base64 associated data (kept for the new ciphertext).'),
      key_version: f.int({ min: 0 }).default(0).describe('Version to re-encrypt with; 0 means latest.'),
      nonce: f.string().optional().describe('Base64 nonce, for convergent keys.'),
      reference: f.string().optional().describe('Echoed in the matching batch result.'),
      batch_input: f.any().optional().describe('List of items with ciphertext, context, reference...'),
      partial_failure_response_code: f.int({ min: 200, max: 599 }).default(400).describe('Status when some batch items fail.'),
    },
    operations: {
      update: {
        summary: 'Rewrap ciphertext.',
        handler: async (req) => {
          const d = req.data;
          const batch = batchInput(d.batch_input);
          const key = await requireKey(deps.store, d.name);
          const one = (i: BatchItem) => {
            if (typeof i.ciphertext !== 'string' || i.ciphertext === '') throw badRequest('missing ciphertext to rewrap');
            const context = optB64(i.context, 'context');
            const associatedData = optB64(i.associated_data, 'associated_data');
            const { plaintext } = decrypt(key, { ciphertext: i.ciphertext, context, associatedData });
            try {
              const ciphertext = encrypt(key, {
                plaintext,
                context,
                associatedData,
                nonce: optB64(i.nonce, 'nonce'),
                keyVersion: batch ? optInt(i.key_version ?? d.key_version, 'key_version') : d.key_version,
              });
              return { ciphertext, key_version: versionOf(ciphertext) };
            } finally {
              plaintext.fill(0);
            }
          };
          if (!batch) {
            return { data: one({ ciphertext: d.ciphertext, context: d.context, associated_data: d.associated_data, nonce: d.nonce }) };
          }
          return runBatch(batch, one, d.partial_failure_response_code);
        },
      },
    },
    synopsis: 'Rewrap ciphertext to the latest key version without revealing the plaintext.',
  });
}
