import { badRequest, definePath, f, publishEvent, type PathDef } from '@strongroom/sdk-plugin';
import { isDeleted, keyPath, rfc3339Nano, type KeyMetadata, type KvStore } from '../store.js';

type StorageOp = ReturnType<KvStore['dropVersion']>;

type Action = 'delete' | 'undelete' | 'destroy';

/** The three version-list endpoints share one shape: `POST <action>/<path>` with `versions`. */
function versionsPath(store: KvStore, action: Action, apply: (m: KeyMetadata, version: string, path: string) => StorageOp[] | void, syn: string, desc: string): PathDef {
  return definePath({
    pattern: `${action}/*path`,
    fields: {
      path: f.string().describe('Location of the secret'),
      versions: f.commaIntList().describe('Versions to act on').optional(),
    },
    operations: {
      update: {
        summary: syn,
        handler: async (req) => {
          const path = keyPath(req.data.path);
          const versions = req.data.versions ?? [];
          if (versions.length === 0) throw badRequest('no version number provided');
          await store.withKey(path, async () => {
            const m = await store.getMetadata(path);
            if (!m) return;
            const ops: StorageOp[] = [];
            for (const v of versions) if (m.versions[String(v)]) ops.push(...(apply(m, String(v), path) ?? []));
            m.updated_time = rfc3339Nano(store.now());
            await store.commit(path, m, ops);
            // About the secret's data, so a policy on data/ sees its versions deleted, restored or destroyed.
            await publishEvent(req, `kv-v2/${action}`, `data/${path}`, { versions: versions.join(',') });
          });
        },
      },
    },
    synopsis: syn,
    description: desc,
  });
}

export function deletePath(store: KvStore): PathDef {
  return versionsPath(
    store,
    'delete',
    (m, v) => {
      const meta = m.versions[v]!;
      if (meta.destroyed || isDeleted(meta, store.now())) return;
      meta.deletion_time = rfc3339Nano(store.now());
    },
    'Mark versions of a secret deleted (reversible).',
    'The data of the versions is kept and can be restored with undelete.',
  );
}

export function undeletePath(store: KvStore): PathDef {
  return versionsPath(
    store,
    'undelete',
    (m, v) => {
      const meta = m.versions[v]!;
      if (!meta.destroyed) meta.deletion_time = '';
    },
    'Restore deleted versions of a secret.',
    'Destroyed versions cannot be restored.',
  );
}

export function destroyPath(store: KvStore): PathDef {
  return versionsPath(
    store,
    'destroy',
    (m, v, path) => {
      m.versions[v]!.destroyed = true;
      return [store.dropVersion(path, Number(v))];
    },
    'Permanently remove the data of versions of a secret.',
    'The versions stay in the metadata, marked destroyed; their data is gone.',
  );
}
