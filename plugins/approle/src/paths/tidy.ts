import { definePath, type KeyedMutex, type Logger, type PathDef } from '@strongroom/sdk-plugin';
import type { ApproleStore } from '../store.js';
import { isExpired } from './secret-id.js';

interface Deps {
  store: ApproleStore;
  mutex: KeyedMutex;
  mountId: string;
  now: () => Date;
  logger: Logger;
}

/** Removes expired SecretIDs (and dangling accessors) in the background; one tidy at a time per mount. */
function createTidy({ store, mutex, mountId, now, logger }: Deps) {
  let running: Promise<number> | null = null;
  const run = async (): Promise<number> => {
    let removed = 0;
    for (const role of await store.listSecretIdRoles()) {
      for (const h of await store.listSecretIdHmacs(role)) {
        await mutex.run(`${mountId}:sid:${role}:${h}`, async () => {
          const e = await store.getSecretId(role, h);
          if (e && isExpired(e, now())) {
            await store.deleteSecretId(e);
            removed++;
          }
        });
      }
      for (const a of await store.listAccessors(role)) {
        const h = await store.hmacForAccessor(role, a);
        if (h !== null && (await store.getSecretId(role, h)) === null) await store.deleteSecretId({ role, hmac: h, accessor: a });
      }
    }
    return removed;
  };
  return {
    /** Starts a tidy unless one is running; resolves with the number of SecretIDs removed. */
    start(): Promise<number> {
      running ??= run()
        .then((n) => {
          logger.info('approle tidy of secret IDs finished', { removed: n });
          return n;
        })
        .catch((err: unknown) => {
          logger.error('approle tidy of secret IDs failed', { error: err instanceof Error ? err.message : String(err) });
          return 0;
        })
        .finally(() => {
          running = null;
        });
      return running;
    },
  };
}

export function tidyPath(deps: Deps, tidy = createTidy(deps)): PathDef {
  return definePath({
    pattern: 'tidy/secret-id',
    operations: {
      update: {
        summary: 'Remove expired SecretIDs',
        handler: async () => {
          void tidy.start();
          return { warnings: ['Tidy operation successfully started. Any information from the operation will be printed to the server logs.'] };
        },
      },
    },
    synopsis: 'Remove expired SecretIDs in the background.',
  });
}
