/** `keys/:name/config`: bounds and flags of a key. `exportable` and `allow_plaintext_backup` can be set, never unset. */
import { badRequest, definePath, f } from '@strongroom/sdk-plugin';
import { checkAutoRotatePeriod } from '../keys/policy.js';
import { requireKeyCopy, type TransitDeps } from './common.js';

export function keysConfigPath(deps: TransitDeps) {
  const { store } = deps;
  return definePath({
    pattern: 'keys/:name/config',
    fields: {
      name: f.string().describe('Name of the key.'),
      min_decryption_version: f.int({ min: 0 }).optional().describe('Oldest version that may decrypt, verify or check an HMAC.'),
      min_encryption_version: f.int({ min: 0 }).optional().describe('Oldest version that may encrypt; 0 means latest.'),
      deletion_allowed: f.bool().optional().describe('Whether the key may be deleted.'),
      exportable: f.bool().optional().describe('Enables export. Cannot be unset.'),
      allow_plaintext_backup: f.bool().optional().describe('Enables plaintext backup. Cannot be unset.'),
      auto_rotate_period: f.duration().optional().describe('Rotation period; omitted leaves it unchanged, 0 disables, otherwise at least 1h.'),
    },
    existenceCheck: async (req) => (await store.get(req.data.name)) !== null,
    operations: {
      update: {
        summary: 'Configure a key.',
        handler: async (req) => {
          const d = req.data;
          await store.locked(d.name, async () => {
            const r = await requireKeyCopy(store, d.name);
            if (d.min_decryption_version !== undefined) {
              if (d.min_decryption_version > r.latest_version) throw badRequest('cannot set min_decryption_version above the latest version');
              if (d.min_decryption_version > 0 && d.min_decryption_version < r.min_available_version) {
                throw badRequest('cannot set min_decryption_version below min_available_version: those versions were trimmed');
              }
              r.min_decryption_version = d.min_decryption_version;
            }
            if (d.min_encryption_version !== undefined) {
              if (d.min_encryption_version > r.latest_version) throw badRequest('cannot set min_encryption_version above the latest version');
              r.min_encryption_version = d.min_encryption_version;
            }
            if (r.min_encryption_version > 0 && r.min_encryption_version < r.min_decryption_version) {
              throw badRequest('min_encryption_version must be 0 or at least min_decryption_version');
            }
            if (d.deletion_allowed !== undefined) r.deletion_allowed = d.deletion_allowed;
            if (d.exportable !== undefined) {
              if (r.exportable && !d.exportable) throw badRequest('exportable cannot be disabled on a key that is already exportable');
              r.exportable = d.exportable;
            }
            if (d.allow_plaintext_backup !== undefined) {
              if (r.allow_plaintext_backup && !d.allow_plaintext_backup) {
                throw badRequest('allow_plaintext_backup cannot be disabled on a key that already allows it');
              }
              r.allow_plaintext_backup = d.allow_plaintext_backup;
            }
            if (d.auto_rotate_period !== undefined) {
              checkAutoRotatePeriod(d.auto_rotate_period);
              r.auto_rotate_period = d.auto_rotate_period;
            }
            await store.save(r);
          });
          return null;
        },
      },
    },
    synopsis: 'Configure a named key.',
  });
}
