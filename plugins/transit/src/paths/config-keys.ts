/** `config/keys`: mount-wide key settings (disable_upsert). */
import { definePath, f } from '@strongroom/sdk-plugin';
import type { TransitDeps } from './common.js';

export function configKeysPath(deps: TransitDeps) {
  return definePath({
    pattern: 'config/keys',
    fields: { disable_upsert: f.bool().optional().describe('Encrypt never creates a missing key.') },
    operations: {
      read: {
        summary: 'Read the keys configuration.',
        handler: async () => ({ data: { ...(await deps.store.config()) } }),
      },
      update: {
        summary: 'Configure keys.',
        handler: async (req) => {
          const cur = await deps.store.config();
          const next = { ...cur, ...(req.data.disable_upsert !== undefined ? { disable_upsert: req.data.disable_upsert } : {}) };
          await deps.store.setConfig(next);
          return { data: { ...next } };
        },
      },
    },
    synopsis: 'Mount-wide key configuration.',
  });
}
