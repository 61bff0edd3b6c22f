/** `restore{/:name}`: restore a backup, refusing to overwrite an existing key unless `force`. */
import { badRequest, codedError, definePath, f } from '@strongroom/sdk-plugin';
import { readBackup } from '../keys/backup.js';
import type { TransitDeps } from './common.js';

export function restorePath(deps: TransitDeps) {
  const { store } = deps;
  return definePath({
    pattern: 'restore{/:name}',
    fields: {
      name: f.string().optional().describe('Name to restore as; defaults to the name in the backup.'),
      backup: f.sensitive(f.string()).describe('Backup blob from backup/:name.'),
      force: f.bool().default(false).describe('Overwrite an existing key of the same name.'),
    },
    operations: {
      update: {
        summary: 'Restore a key.',
        handler: async (req) => {
          const rec = readBackup(req.data.backup, req.data.name, new Date(deps.now()));
          if (!/^[^/]+$/.test(rec.name)) throw badRequest('invalid key name in backup');
          await store.locked(rec.name, async () => {
            // Vault answers 500 with this text, and clients match both.
            if (!req.data.force && (await store.get(rec.name))) throw codedError(500, `key "${rec.name}" already exists`);
            await store.save(rec);
          });
          return null;
        },
      },
    },
    synopsis: 'Restore a key from a backup.',
  });
}
