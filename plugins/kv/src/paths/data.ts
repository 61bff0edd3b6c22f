import { badRequest, definePath, f, notFound, publishEvent, type PathDef } from '@strongroom/sdk-plugin';
import { checkCas, isDeleted, keyPath, readVersion, rfc3339Nano, versionResponse, writeVersion, type KvStore } from '../store.js';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** RFC 7386 JSON merge patch: null removes, objects merge recursively, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

export function dataPath(store: KvStore): PathDef {
  return definePath({
    pattern: 'data/*path',
    fields: {
      path: f.string().describe('Location of the secret'),
      version: f.query(f.int({ min: 0 })).describe('Version to read; 0 or absent for the latest').optional(),
      data: f.sensitive(f.map()).describe('The secret: an object of key-value pairs').optional(),
      options: f.map().describe('Write options, e.g. {"cas": 0} for check-and-set').optional(),
    },
    existenceCheck: async (req) => (await store.getMetadata(req.data.path)) !== null,
    operations: {
      read: {
        summary: 'Read a version of a secret',
        handler: async (req) => {
          const r = await readVersion(store, keyPath(req.data.path), req.data.version ?? 0);
          if (!r) return null;
          return r.data ? { data: { data: r.data, metadata: r.metadata } } : { data: { data: null, metadata: r.metadata }, status: 404 };
        },
      },
      update: {
        summary: 'Write a new version of a secret',
        handler: async (req) => {
          const path = keyPath(req.data.path);
          const data = req.data.data;
          if (!data) throw badRequestNoData();
          return store.withKey(path, async () => {
            const existing = await store.getMetadata(path);
            checkCas(req.data.options, existing, await store.getConfig());
            const m = await writeVersion(store, path, existing, data);
            // Under the key's lock: a key's events go out in the order of its writes.
            await publishEvent(req, 'kv-v2/data-write', `data/${path}`, { version: m.current_version });
            return { data: versionResponse(m, m.current_version) };
          });
        },
      },
      patch: {
        summary: 'Patch the latest version of a secret (JSON merge patch)',
        handler: async (req) => {
          const path = keyPath(req.data.path);
          const patch = req.data.data;
          if (!patch) throw badRequestNoData();
          return store.withKey(path, async () => {
            const existing = await store.getMetadata(path);
            const current = existing?.versions[String(existing.current_version)];
            // As Vault: nothing to merge into is a 404, never a silent success.
            if (!existing || !current || current.destroyed || isDeleted(current, store.now())) throw notFound(`no existing data at ${req.data.path}`);
            checkCas(req.data.options, existing, await store.getConfig());
            const base = (await store.getVersion(path, existing.current_version)) ?? {};
            const merged = mergePatch(base, patch) as Record<string, unknown>;
            const m = await writeVersion(store, path, existing, merged);
            await publishEvent(req, 'kv-v2/data-patch', `data/${path}`, { version: m.current_version });
            return { data: versionResponse(m, m.current_version) };
          });
        },
      },
      delete: {
        summary: 'Soft-delete the latest version of a secret',
        handler: async (req) => {
          const path = keyPath(req.data.path);
          await store.withKey(path, async () => {
            const m = await store.getMetadata(path);
            const v = m?.versions[String(m.current_version)];
            if (!m || !v || v.destroyed || isDeleted(v, store.now())) return;
            v.deletion_time = rfc3339Nano(store.now());
            m.updated_time = v.deletion_time;
            await store.putMetadata(path, m);
            await publishEvent(req, 'kv-v2/data-delete', `data/${path}`, { version: m.current_version });
          });
        },
      },
    },
    synopsis: DATA_SYN,
    description: DATA_DESC,
  });
}

const badRequestNoData = () => badRequest('no data provided');

const DATA_SYN = 'Write, patch, read and delete versioned secrets.';
const DATA_DESC = `A write stores \`data\` as a new version; \`options.cas\` enables
check-and-set (0: only if the secret does not exist yet; N: only if the current
version is N). A read returns the latest version, or \`version\`. A patch merges
\`data\` into the latest version (JSON merge patch) and writes the result as a
new version. A delete marks the latest version deleted; it can be undeleted.`;
