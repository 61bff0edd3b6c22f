/**
 * `encrypt/:name`. Upsert (spec): a missing key is created with defaults only
 * when the core sent `create` (the caller has the create capability) and
 * `disable_upsert` is off; `update` on a missing key is a 400.
 */
import { badRequest, definePath, f } from '@strongroom/sdk-plugin';
import { KEY_TYPES } from '../keys/key-types.js';
import { encrypt } from '../keys/operations.js';
import { addVersion, generateVersion, type LoadedPolicy, newPolicyRecord } from '../keys/policy.js';
import { batchInput, type BatchItem, optB64, optInt, runBatch, type TransitDeps } from './common.js';

export function versionOf(ciphertext: string): number {
  return Number(ciphertext.slice('service:v'.length, ciphertext.indexOf(':', 'service:v'.length)));
}

export function encryptPath(deps: TransitDeps) {
  const { store } = deps;
  return definePath({
    pattern: 'encrypt/:name',
    fields: {
      name: f.string().describe('Name of the key.'),
      plaintext: f.sensitive(f.string().optional()).describe('Base64 plaintext.'),
      context: f.string().optional().describe('Base64 context for key derivation; required for derived keys.'),
      associated_data: f.string().optional().describe('Base64 associated data (AEAD types).'),
      key_version: f.int({ min: 0 }).default(0).describe('Version to encrypt with; 0 means latest.'),
      nonce: f.string().optional().describe('Base64 nonce; used only by convergent keys.'),
      reference: f.string().optional().describe('Echoed in the matching batch result.'),
      batch_input: f.any().optional().describe('List of items with plaintext, context, reference...'),
      type: f.enum(KEY_TYPES).default('aes256-gcm96').describe('Type of the key if it is created (upsert).'),
      convergent_encryption: f.bool().default(false).describe('Convergent encryption if the key is created (upsert).'),
      partial_failure_response_code: f.int({ min: 200, max: 599 }).default(400).describe('Status when some batch items fail.'),
    },
    existenceCheck: async (req) => (await store.get(req.data.name)) !== null,
    operations: {
      update: {
        summary: 'Encrypt data (creates the key with the create capability).',
        handler: async (req) => {
          const d = req.data;
          const batch = batchInput(d.batch_input);
          const items: BatchItem[] = batch ?? [
            { plaintext: d.plaintext, context: d.context, associated_data: d.associated_data, nonce: d.nonce, key_version: d.key_version },
          ];
          if (!batch && d.plaintext === undefined) throw badRequest('missing plaintext to encrypt');
          let p: LoadedPolicy | null = await store.get(d.name);
          if (!p) {
            if (req.operation !== 'create' || (await store.config()).disable_upsert) throw badRequest('encryption key not found');
            const derived = items.some((i) => typeof i.context === 'string' && i.context !== '');
            p = await store.locked(d.name, async () => {
              const existing = await store.get(d.name);
              if (existing) return existing;
              const rec = newPolicyRecord({ name: d.name, type: d.type, derived, convergent_encryption: d.convergent_encryption });
              addVersion(rec, await generateVersion(rec.type, rec.key_size, deps.now()));
              return store.save(rec);
            });
          }
          const key = p;
          const one = (i: BatchItem) => {
            if (typeof i.plaintext !== 'string') throw badRequest('missing plaintext to encrypt');
            const ciphertext = encrypt(key, {
              plaintext: optB64(i.plaintext, 'plaintext') ?? Buffer.alloc(0),
              context: optB64(i.context, 'context'),
              associatedData: optB64(i.associated_data, 'associated_data'),
              nonce: optB64(i.nonce, 'nonce'),
              keyVersion: batch ? optInt(i.key_version ?? d.key_version, 'key_version') : d.key_version,
            });
            return { ciphertext, key_version: versionOf(ciphertext) };
          };
          if (!batch) return { data: one(items[0] as BatchItem) };
          return runBatch(batch, one, d.partial_failure_response_code);
        },
      },
    },
    synopsis: 'Encrypt a plaintext (or a batch) with a named key.',
    description: 'Ciphertexts look like `service:v<N>:<base64>`. All plaintext is base64 because it may be binary.',
  });
}
