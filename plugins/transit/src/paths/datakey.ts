/** `datakey/:type/:name`: a fresh random data key, returned wrapped (and in plaintext for type `plaintext`). */
import { randomBytes } from 'node:crypto';
import { badRequest, definePath, f } from '@strongroom/sdk-plugin';
import { encrypt } from '../keys/operations.js';
import { optB64, requireKey, type TransitDeps } from './common.js';
import { versionOf } from './encrypt.js';

export function datakeyPath(deps: TransitDeps) {
  return definePath({
    pattern: 'datakey/:type/:name',
    fields: {
      type: f.enum(['plaintext', 'wrapped']).describe('`plaintext` returns the key and its ciphertext; `wrapped` only the ciphertext.'),
      name: f.string().describe('Name of the key.'),
      context: f.string().optional().describe('Base64 context, for derived keys.'),
      associated_data: f.string().optional().describe('Base64 associated data.'),
      nonce: f.string().optional().describe('Base64 nonce, for convergent keys.'),
      bits: f.int().default(256).describe('Data key size: 128, 256 or 512.'),
      key_version: f.int({ min: 0 }).default(0).describe('Version to wrap with; 0 means latest.'),
    },
    operations: {
      update: {
        summary: 'Generate a data key.',
        handler: async (req) => {
          const d = req.data;
          if (d.bits !== 128 && d.bits !== 256 && d.bits !== 512) throw badRequest('field "bits": must be 128, 256 or 512');
          const key = await requireKey(deps.store, d.name);
          const dataKey = randomBytes(d.bits / 8);
          try {
            const ciphertext = encrypt(key, {
              plaintext: dataKey,
              context: optB64(d.context, 'context'),
              associatedData: optB64(d.associated_data, 'associated_data'),
              nonce: optB64(d.nonce, 'nonce'),
              keyVersion: d.key_version,
            });
            const data: Record<string, unknown> = { ciphertext, key_version: versionOf(ciphertext) };
            if (d.type === 'plaintext') data.plaintext = dataKey.toString('base64');
            return { data };
          } finally {
            dataKey.fill(0);
          }
        },
      },
    },
    synopsis: 'Generate a data key wrapped by a named key.',
  });
}
