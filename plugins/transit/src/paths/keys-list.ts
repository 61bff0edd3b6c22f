/** `keys/` LIST and SCAN. */
import { definePath, scanStorage } from '@strongroom/sdk-plugin';
import type { TransitDeps } from './common.js';

export function keysListPath(deps: TransitDeps) {
  return definePath({
    pattern: 'keys',
    operations: {
      list: {
        summary: 'List key names.',
        handler: () => deps.store.list(),
      },
      scan: { summary: 'Every name below the path (any depth), as SCAN pages it.', handler: scanStorage(deps.store.prefix) },
    },
    synopsis: 'List the named keys.',
  });
}
