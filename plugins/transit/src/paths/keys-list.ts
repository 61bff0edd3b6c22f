/** `keys/` LIST. */
import { definePath } from '@strongroom/sdk-plugin';
import { paginate } from '@strongroom/sdk-plugin/host';
import type { TransitDeps } from './common.js';

export function keysListPath(deps: TransitDeps) {
  return definePath({
    pattern: 'keys',
    operations: {
      list: {
        summary: 'List key names.',
        handler: async (req) => ({ data: { keys: paginate(await deps.store.list(), req.list.after, req.list.limit) } }),
      },
    },
    synopsis: 'List the named keys.',
  });
}
