import { z } from 'zod';
import { badRequest, definePath, f, formatGoDuration, publishEvent, scanStorage, type PathDef } from '@strongroom/sdk-plugin';
import { dirPrefix, keyPath, newMetadata, rfc3339Nano, type KeyMetadata, type KvStore } from '../store.js';

// Vault's documented limits on custom_metadata.
const MAX_CUSTOM_KEYS = 64;
const MAX_CUSTOM_KEY_LEN = 128;
const MAX_CUSTOM_VALUE_LEN = 512;

function checkCustomMetadata(cm: Record<string, string | null>): void {
  const keys = Object.keys(cm);
  if (keys.length > MAX_CUSTOM_KEYS) throw badRequest(`field "custom_metadata": at most ${MAX_CUSTOM_KEYS} keys`);
  for (const k of keys) {
    if (k === '' || Buffer.byteLength(k) > MAX_CUSTOM_KEY_LEN) throw badRequest(`field "custom_metadata": key length must be 1 to ${MAX_CUSTOM_KEY_LEN} bytes`);
    const v = cm[k];
    if (v !== null && v !== undefined && Buffer.byteLength(v) > MAX_CUSTOM_VALUE_LEN) {
      throw badRequest(`field "custom_metadata": value of "${k}" exceeds ${MAX_CUSTOM_VALUE_LEN} bytes`);
    }
  }
}

function metadataResponse(m: KeyMetadata): Record<string, unknown> {
  return {
    cas_required: m.cas_required,
    created_time: m.created_time,
    current_version: m.current_version,
    custom_metadata: m.custom_metadata,
    delete_version_after: formatGoDuration(m.delete_version_after),
    max_versions: m.max_versions,
    oldest_version: m.oldest_version,
    updated_time: m.updated_time,
    versions: m.versions,
  };
}

export function metadataPath(store: KvStore): PathDef {
  return definePath({
    pattern: 'metadata/*path',
    fields: {
      path: f.string().describe('Location of the secret'),
      max_versions: f.int({ min: 0 }).describe('Versions kept for this key; 0 uses the mount setting').optional(),
      cas_required: f.bool().describe('Require check-and-set on writes of this key').optional(),
      delete_version_after: f.duration().describe('Delete versions this long after they are written; 0 uses the mount setting').optional(),
      custom_metadata: f.map(z.string().nullable()).describe('String key-value pairs kept with the key (not secret)').optional(),
    },
    existenceCheck: async (req) => (await store.getMetadata(req.data.path)) !== null,
    operations: {
      read: {
        summary: 'Read the metadata and version history of a secret',
        handler: async (req) => {
          const m = await store.getMetadata(keyPath(req.data.path));
          return m ? { data: metadataResponse(m) } : null;
        },
      },
      list: {
        summary: 'List the secrets in a directory',
        handler: (req) => store.listMetadata(dirPrefix(req.data.path)),
      },
      scan: {
        summary: 'Every secret below a directory, at any depth (relative paths)',
        handler: scanStorage((req) => `metadata/${dirPrefix(req.data.path)}`),
      },
      update: {
        summary: 'Create or update the metadata of a secret',
        handler: async (req) => {
          const path = keyPath(req.data.path);
          const cm = req.data.custom_metadata;
          if (cm) {
            if (Object.values(cm).some((v) => v === null)) throw badRequest('field "custom_metadata": values must be strings');
            checkCustomMetadata(cm);
          }
          await store.withKey(path, async () => {
            const m = (await store.getMetadata(path)) ?? newMetadata(store.now());
            if (req.data.max_versions !== undefined) m.max_versions = req.data.max_versions;
            if (req.data.cas_required !== undefined) m.cas_required = req.data.cas_required;
            if (req.data.delete_version_after !== undefined) m.delete_version_after = req.data.delete_version_after;
            if (cm) m.custom_metadata = cm as Record<string, string>;
            m.updated_time = rfc3339Nano(store.now());
            await store.putMetadata(path, m);
            await publishEvent(req, 'kv-v2/metadata-write', `metadata/${path}`);
          });
        },
      },
      patch: {
        summary: 'Patch the metadata of a secret (JSON merge patch on custom_metadata)',
        handler: async (req) => {
          const path = keyPath(req.data.path);
          return store.withKey(path, async () => {
            const m = await store.getMetadata(path);
            if (!m) return null;
            if (req.data.max_versions !== undefined) m.max_versions = req.data.max_versions;
            if (req.data.cas_required !== undefined) m.cas_required = req.data.cas_required;
            if (req.data.delete_version_after !== undefined) m.delete_version_after = req.data.delete_version_after;
            const cm = req.data.custom_metadata;
            if (cm) {
              const merged: Record<string, string> = { ...(m.custom_metadata ?? {}) };
              for (const [k, v] of Object.entries(cm)) {
                if (v === null) delete merged[k];
                else merged[k] = v;
              }
              checkCustomMetadata(merged);
              m.custom_metadata = Object.keys(merged).length ? merged : null;
            }
            m.updated_time = rfc3339Nano(store.now());
            await store.putMetadata(path, m);
            await publishEvent(req, 'kv-v2/metadata-patch', `metadata/${path}`);
            return null;
          });
        },
      },
      delete: {
        summary: 'Delete a secret: every version and its metadata',
        handler: async (req) => {
          const path = keyPath(req.data.path);
          await store.withKey(path, async () => {
            const m = await store.getMetadata(path);
            if (!m) return;
            await store.deleteKey(path, m);
            await publishEvent(req, 'kv-v2/metadata-delete', `metadata/${path}`);
          });
        },
      },
    },
    synopsis: METADATA_SYN,
    description: METADATA_DESC,
  });
}

const METADATA_SYN = 'Manage the metadata and version history of secrets; list secrets.';
const METADATA_DESC = `A read returns the key's settings and every kept version with its
\`created_time\`, \`deletion_time\` and \`destroyed\` flag. A write changes only the
fields sent (and creates the key's metadata if it has none). A patch merges
\`custom_metadata\` (a null value removes a key). A delete removes every version
and the metadata, permanently. LIST works on directories.`;
