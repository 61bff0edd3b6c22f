/** `keys/:name`: create, read and delete a key. */
import { badRequest, definePath, f } from '@strongroom/sdk-plugin';
import { KEY_TYPES } from '../keys/key-types.js';
import { addVersion, generateVersion, newPolicyRecord } from '../keys/policy.js';
import type { TransitDeps } from './common.js';
import { keyView } from './key-view.js';

export function keysPath(deps: TransitDeps) {
  const { store } = deps;
  return definePath({
    pattern: 'keys/:name',
    fields: {
      name: f.string().describe('Name of the key.'),
      type: f.enum(KEY_TYPES).default('aes256-gcm96').describe('Type of key to create.'),
      derived: f.bool().default(false).describe('Enables key derivation: every operation must carry a context.'),
      convergent_encryption: f.bool().default(false).describe('Same plaintext and context give the same ciphertext. Requires derived.'),
      exportable: f.bool().default(false).describe('Allows the key to be exported. Cannot be unset.'),
      allow_plaintext_backup: f.bool().default(false).describe('Allows a plaintext backup of the key. Cannot be unset.'),
      key_size: f.int({ min: 0 }).default(0).describe('Key size in bytes, for hmac keys only (32 to 512).'),
      auto_rotate_period: f.duration().default(0).describe('Rotation period; 0 disables, otherwise at least 1h.'),
      context: f.string().optional().describe('Ignored; accepted for compatibility.'),
    },
    existenceCheck: async (req) => (await store.get(req.data.name)) !== null,
    operations: {
      update: {
        summary: 'Create a key.',
        handler: async (req) => {
          const d = req.data;
          await store.locked(d.name, async () => {
            if (await store.get(d.name)) return;
            const rec = newPolicyRecord({
              name: d.name,
              type: d.type,
              derived: d.derived,
              convergent_encryption: d.convergent_encryption,
              exportable: d.exportable,
              allow_plaintext_backup: d.allow_plaintext_backup,
              key_size: d.key_size,
              auto_rotate_period: d.auto_rotate_period,
            });
            addVersion(rec, await generateVersion(rec.type, rec.key_size, deps.now()));
            await store.save(rec);
          });
          return null;
        },
      },
      read: {
        summary: 'Read a key (never its material).',
        handler: async (req) => {
          const p = await store.get(req.data.name);
          return p ? { data: keyView(p) } : null;
        },
      },
      delete: {
        summary: 'Delete a key; deletion_allowed must be set.',
        handler: async (req) => {
          await store.locked(req.data.name, async () => {
            const p = await store.get(req.data.name);
            if (!p) throw badRequest('could not delete key; not found');
            if (!p.record.deletion_allowed) throw badRequest('deletion is not allowed for this key');
            await store.remove(req.data.name);
          });
          return null;
        },
      },
    },
    synopsis: 'Manage named encryption keys.',
    description: 'Create, read and delete keys. Deleting requires `deletion_allowed`; data encrypted with a deleted key is lost.',
  });
}
