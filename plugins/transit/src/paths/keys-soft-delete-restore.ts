/** `keys/:name/soft-delete-restore`: make a soft-deleted key usable again. */
import { definePath, f } from '@strongroom/sdk-plugin';
import { requireKeyCopy, type TransitDeps } from './common.js';

export function keysSoftDeleteRestorePath(deps: TransitDeps) {
  const { store } = deps;
  return definePath({
    pattern: 'keys/:name/soft-delete-restore',
    fields: { name: f.string().describe('Name of the key.') },
    operations: {
      update: {
        summary: 'Restore a soft-deleted key.',
        handler: async (req) => {
          await store.locked(req.data.name, async () => {
            const r = await requireKeyCopy(store, req.data.name);
            r.soft_deleted = false;
            await store.save(r);
          });
          return null;
        },
      },
    },
    synopsis: 'Restore a soft-deleted key.',
  });
}
