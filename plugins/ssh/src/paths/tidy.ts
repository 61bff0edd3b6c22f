/** DELETE tidy/dynamic-keys: removes host keys left by the removed dynamic-keys feature. */
import { definePath, type PathDef } from '@strongroom/sdk-plugin';
import type { SshDeps } from './deps.js';

export function tidyPath({ store }: SshDeps): PathDef {
  return definePath({
    pattern: 'tidy/dynamic-keys',
    synopsis: 'Remove the stored host keys of the removed dynamic-keys feature.',
    description: 'Leases and remote hosts are not touched.',
    operations: {
      delete: {
        summary: 'Delete every stored dynamic host key.',
        handler: async () => {
          const keys = (await store.dynamicKeys.list()).filter((k) => !k.endsWith('/'));
          for (const k of keys) await store.dynamicKeys.delete(k);
          return { data: { message: `Successfully deleted ${keys.length} keys` } };
        },
      },
    },
  });
}
