/**
 * kv version 1 to 2 (`strongroom kv enable-versioning`, or options.version
 * tuned to "2"): each v1 key becomes version 1 of a v2 secret. The version,
 * its metadata and the removal of the v1 entry are one batch, so a crash
 * midway leaves each key either v1 (moved on the next setup) or v2, never
 * both. As in Vault, v1 keys that are v2's own names (`config`, under
 * `metadata/` or `versions/`) are left as they are.
 */
import { getJSON, type Logger, type Storage } from '@strongroom/sdk-plugin';
import { newMetadata, rfc3339Nano, type KvStore } from './store.js';

const V2_OWN = (key: string) => key === 'config' || key.startsWith('metadata/') || key.startsWith('versions/');

/** Moves every v1 key; returns how many. One list of the top level when there is nothing to move. */
export async function upgradeFromV1(storage: Storage, store: KvStore, logger: Pick<Logger, 'info'>): Promise<number> {
  const top = await storage.list('');
  if (top.every((k) => k === 'config' || k === 'metadata/' || k === 'versions/')) return 0;
  logger.info('kv: upgrading version 1 data to version 2');
  let moved = 0;
  let after = '';
  for (;;) {
    const keys = await storage.listRecursive('', { after, limit: 1000 });
    if (keys.length === 0) break;
    after = keys[keys.length - 1]!;
    for (const key of keys) {
      if (V2_OWN(key)) continue;
      await store.withKey(key, async () => {
        const data = await getJSON<Record<string, unknown>>(storage, key);
        if (data === null || (await store.getMetadata(key)) !== null) return;
        const now = store.now();
        const m = newMetadata(now);
        m.versions['1'] = { created_time: rfc3339Nano(now), deletion_time: '', destroyed: false };
        m.current_version = 1;
        m.oldest_version = 1;
        await store.commit(key, m, [store.putVersion(key, 1, data), { type: 'delete', key }]);
        moved++;
      });
    }
  }
  logger.info('kv: upgraded to version 2', { keys: moved });
  return moved;
}
