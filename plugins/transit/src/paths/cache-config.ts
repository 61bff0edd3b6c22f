/** `cache-config`: size of the in-process key cache (0: unbounded). */
import { badRequest, definePath, f } from '@strongroom/sdk-plugin';
import type { TransitDeps } from './common.js';

export function cacheConfigPath(deps: TransitDeps) {
  return definePath({
    pattern: 'cache-config',
    fields: { size: f.int({ min: 0 }).default(0).describe('Number of keys kept cached; 0 means unbounded, otherwise at least 10.') },
    operations: {
      read: {
        summary: 'Read the cache configuration.',
        handler: async () => ({ data: { size: await deps.store.cacheSize() } }),
      },
      update: {
        summary: 'Configure the cache.',
        handler: async (req) => {
          if (req.data.size !== 0 && req.data.size < 10) throw badRequest('field "size": must be 0 or at least 10');
          await deps.store.setCacheSize(req.data.size);
          return null;
        },
      },
    },
    synopsis: 'Configure the key cache.',
  });
}
