/**
 * `keys/:name/import_version`: add material to an imported key (spec: only
 * imported keys accept it; refused once the service rotated the key). With no
 * `version`, a new version is added unless a private key is given and the
 * latest version lacks one, in which case it fills that version.
 */
import { badRequest, definePath, f } from '@strongroom/sdk-plugin';
import { byokUnwrap } from '../crypto/byok.js';
import { samePublicKey, versionFromMaterial, versionFromPublicKey } from '../keys/import.js';
import { addVersion } from '../keys/policy.js';
import { requireKeyCopy, type TransitDeps } from './common.js';
import { HASH_FUNCTIONS } from './keys-import.js';

export function keysImportVersionPath(deps: TransitDeps) {
  const { store } = deps;
  return definePath({
    pattern: 'keys/:name/import_version',
    fields: {
      name: f.string().describe('Name of the key.'),
      ciphertext: f.sensitive(f.string().optional()).describe('Base64 wrapped key material.'),
      hash_function: f.enum(HASH_FUNCTIONS).default('SHA256').describe('OAEP hash function.'),
      public_key: f.string().optional().describe('PEM public key.'),
      version: f.int({ min: 1 }).optional().describe('Version to fill with its private key; omitted adds a version.'),
    },
    operations: {
      update: {
        summary: 'Import a new version of a key.',
        handler: async (req) => {
          const d = req.data;
          if (!d.ciphertext && !d.public_key) throw badRequest('field "ciphertext": missing required field (or give public_key)');
          await store.locked(d.name, async () => {
            const r = await requireKeyCopy(store, d.name);
            if (!r.imported) throw badRequest('import_version is only supported for imported keys');
            if (r.rotated_after_import) throw badRequest('the key was rotated by the service; further imports are refused');
            const now = deps.now();
            const incoming = d.ciphertext
              ? versionFromMaterial(r.type, byokUnwrap(await store.wrappingKey(), d.ciphertext, d.hash_function), now)
              : versionFromPublicKey(r.type, d.public_key as string, now);
            const target = d.version ?? (incoming.private_key && !r.versions[String(r.latest_version)]?.private_key ? r.latest_version : undefined);
            if (target === undefined) {
              addVersion(r, incoming);
            } else {
              const existing = r.versions[String(target)];
              if (!existing) throw badRequest(`field "version": version ${target} does not exist`);
              if (existing.private_key) throw badRequest(`version ${target} already has a private key`);
              if (!incoming.private_key) throw badRequest('a private key is needed to update an existing version');
              if (!existing.public_key || !samePublicKey(incoming, existing.public_key)) {
                throw badRequest(`the private key does not match the public key of version ${target}`);
              }
              r.versions[String(target)] = { ...incoming, hmac_key: existing.hmac_key, creation_time: existing.creation_time };
            }
            await store.save(r);
          });
          return null;
        },
      },
    },
    synopsis: 'Import new key material into an imported key.',
  });
}
