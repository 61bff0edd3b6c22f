/** `backup/:name`: plaintext backup, only for keys with allow_plaintext_backup. */
import { definePath, f } from '@strongroom/sdk-plugin';
import { makeBackup } from '../keys/backup.js';
import { requireKey, type TransitDeps } from './common.js';

export function backupPath(deps: TransitDeps) {
  return definePath({
    pattern: 'backup/:name',
    fields: { name: f.string().describe('Name of the key.') },
    operations: {
      read: {
        summary: 'Back up a key.',
        handler: async (req) => {
          const key = await requireKey(deps.store, req.data.name);
          return { data: { backup: makeBackup(key.record, new Date(deps.now())) } };
        },
      },
    },
    synopsis: 'Back up a named key (with all its versions) as a plaintext blob.',
  });
}
