import { badRequest, defineBackend, type BackendFactory } from '@strongroom/sdk-plugin';
import { createKvStore } from './store.js';
import { configPath } from './paths/config.js';
import { dataPath } from './paths/data.js';
import { metadataPath } from './paths/metadata.js';
import { deletePath, destroyPath, undeletePath } from './paths/versions.js';
import { subkeysPath } from './paths/subkeys.js';
import { v1Path } from './paths/v1.js';
import { relocatePaths } from './paths/relocate.js';
import { upgradeFromV1 } from './upgrade.js';

export interface KvBackendOptions {
  /** Injectable clock for tests (created/deletion times, delete_version_after). */
  now?: () => Date;
}

/** The kv engine; mount option `version` selects "1" (default, as Vault) or "2". */
export function createKvBackend(opts: KvBackendOptions = {}): BackendFactory {
  return defineBackend({
    type: 'secret',
    help: KV_HELP,
    async setup({ mount, storage, logger }) {
      const version = mount.options.version ?? '1';
      if (version === '1' || version === '') return { paths: [v1Path()] };
      if (version !== '2') throw badRequest(`field "version": kv version must be 1 or 2`);
      const store = createKvStore(opts.now ? { storage, now: opts.now } : { storage });
      // A mount tuned from version 1 moves its data before it serves as version 2.
      await upgradeFromV1(storage, store, logger);
      return {
        // `*path` patterns are greedy but each sits behind its own literal prefix, so order is free here.
        paths: [configPath(store), dataPath(store), metadataPath(store), deletePath(store), undeletePath(store), destroyPath(store), subkeysPath(store), ...relocatePaths(store)],
        invalidate: (key) => store.invalidate(key),
      };
    },
  });
}

const KV_HELP = `The kv backend stores arbitrary secrets.

Version 1 stores one value per path. Version 2 keeps versions of each secret:
write and read under \`data/\`, manage versions with \`delete/\`, \`undelete/\`
and \`destroy/\`, read or change settings and history under \`metadata/\`,
move or copy a secret with all its versions under \`move/\` and \`copy/\`, and
set mount-wide defaults at \`config\`.`;

export const kvBackend = createKvBackend();
