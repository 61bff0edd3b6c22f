/** `keys/` LIST. */
import { definePath } from '@strongroom/sdk-plugin';
import type { TransitDeps } from './common.js';

export function keysListPath(deps: TransitDeps) {
  return definePath({
    pattern: 'keys',
    operations: {
      list: {
        summary: 'List key names.',
        handler: () => deps.store.list(),
      },
    },
    synopsis: 'List the named keys.',
  });
}
