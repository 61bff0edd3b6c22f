/** `keys/:name/trim`: permanently delete versions below `min_available_version`. */
import { badRequest, definePath, f } from '@strongroom/sdk-plugin';
import { requireKeyCopy, type TransitDeps } from './common.js';

export function keysTrimPath(deps: TransitDeps) {
  const { store } = deps;
  return definePath({
    pattern: 'keys/:name/trim',
    fields: {
      name: f.string().describe('Name of the key.'),
      min_available_version: f.int({ min: 1 }).describe('Versions below this are deleted for good.'),
    },
    operations: {
      update: {
        summary: 'Trim old key versions.',
        handler: async (req) => {
          const { name, min_available_version: min } = req.data;
          await store.locked(name, async () => {
            const r = await requireKeyCopy(store, name);
            if (min < r.min_available_version) throw badRequest('min_available_version cannot be lowered');
            if (min > Math.max(1, r.min_decryption_version)) throw badRequest('min_available_version cannot be above min_decryption_version');
            if (r.min_encryption_version > 0 && min > r.min_encryption_version) {
              throw badRequest('min_available_version cannot be above min_encryption_version');
            }
            for (const v of Object.keys(r.versions)) if (Number(v) < min) delete r.versions[v];
            r.min_available_version = min;
            await store.save(r);
          });
          return null;
        },
      },
    },
    synopsis: 'Trim key versions below a minimum.',
  });
}
