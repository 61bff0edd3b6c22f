/** `keys/:name/soft-delete` (DELETE): block data operations without losing the key; ignores deletion_allowed. */
import { definePath, f } from '@strongroom/sdk-plugin';
import { requireKeyCopy, type TransitDeps } from './common.js';

export function keysSoftDeletePath(deps: TransitDeps) {
  const { store } = deps;
  return definePath({
    pattern: 'keys/:name/soft-delete',
    fields: { name: f.string().describe('Name of the key.') },
    operations: {
      delete: {
        summary: 'Soft-delete a key.',
        handler: async (req) => {
          await store.locked(req.data.name, async () => {
            const r = await requireKeyCopy(store, req.data.name);
            r.soft_deleted = true;
            await store.save(r);
          });
          return null;
        },
      },
    },
    synopsis: 'Soft-delete a key: it stays readable, listable, configurable and backup-able, but cannot be used.',
  });
}
