/** `keys/:name/import`: create a key from BYOK-wrapped material or a public key. */
import { badRequest, definePath, f } from '@strongroom/sdk-plugin';
import { byokUnwrap } from '../crypto/byok.js';
import { KEY_TYPES } from '../keys/key-types.js';
import { versionFromMaterial, versionFromPublicKey } from '../keys/import.js';
import { addVersion, newPolicyRecord } from '../keys/policy.js';
import { optB64, type TransitDeps } from './common.js';

export const HASH_FUNCTIONS = ['SHA1', 'SHA224', 'SHA256', 'SHA384', 'SHA512'] as const;

export function keysImportPath(deps: TransitDeps) {
  const { store } = deps;
  return definePath({
    pattern: 'keys/:name/import',
    fields: {
      name: f.string().describe('Name of the key.'),
      type: f.enum(KEY_TYPES).describe('Type of the imported key (hmac is not importable).'),
      ciphertext: f.sensitive(f.string().optional()).describe('Base64 wrapped key: RSA-OAEP(ephemeral AES key) || AES-KWP(key material).'),
      hash_function: f.enum(HASH_FUNCTIONS).default('SHA256').describe('OAEP hash function.'),
      public_key: f.string().optional().describe('PEM public key: import for verification and encryption only.'),
      allow_rotation: f.bool().default(false).describe('Allow the service to rotate the imported key.'),
      derived: f.bool().default(false).describe('Enables key derivation.'),
      context: f.string().optional().describe('Base64 context; required when derived.'),
      exportable: f.bool().default(false).describe('Allows export. Cannot be unset.'),
      allow_plaintext_backup: f.bool().default(false).describe('Allows plaintext backup. Cannot be unset.'),
      auto_rotate_period: f.duration().default(0).describe('Rotation period; 0 disables, otherwise at least 1h.'),
    },
    operations: {
      update: {
        summary: 'Import a key.',
        handler: async (req) => {
          const d = req.data;
          if (d.type === 'hmac') throw badRequest('field "type": keys of type hmac cannot be imported');
          if (!d.ciphertext && !d.public_key) throw badRequest('field "ciphertext": missing required field (or give public_key)');
          if (d.ciphertext && d.public_key) throw badRequest('give either ciphertext or public_key, not both');
          if (d.derived && !optB64(d.context, 'context')) throw badRequest('field "context": required when derived is true');
          await store.locked(d.name, async () => {
            if (await store.get(d.name)) throw badRequest(`key "${d.name}" already exists`);
            const rec = newPolicyRecord({
              name: d.name,
              type: d.type,
              derived: d.derived,
              exportable: d.exportable,
              allow_plaintext_backup: d.allow_plaintext_backup,
              auto_rotate_period: d.auto_rotate_period,
            });
            const now = deps.now();
            const version = d.ciphertext
              ? versionFromMaterial(d.type, byokUnwrap(await store.wrappingKey(), d.ciphertext, d.hash_function), now)
              : versionFromPublicKey(d.type, d.public_key as string, now);
            addVersion(rec, version);
            rec.imported = true;
            rec.allow_rotation = d.allow_rotation;
            await store.save(rec);
          });
          return null;
        },
      },
    },
    synopsis: 'Import a key wrapped with the mount wrapping key.',
  });
}
