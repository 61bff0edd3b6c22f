import { definePath, f, type PathDef } from '@strongroom/sdk-plugin';
import { keyPath, readVersion, type KvStore } from '../store.js';

/** The key structure of a secret with every leaf value replaced by null, down to `depth` levels (0: all). */
function subkeys(value: Record<string, unknown>, depth: number, level = 1): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const nested = v !== null && typeof v === 'object' && !Array.isArray(v);
    out[k] = nested && (depth === 0 || level < depth) ? subkeys(v as Record<string, unknown>, depth, level + 1) : null;
  }
  return out;
}

export function subkeysPath(store: KvStore): PathDef {
  return definePath({
    pattern: 'subkeys/*path',
    fields: {
      path: f.string().describe('Location of the secret'),
      version: f.query(f.int({ min: 0 })).describe('Version to read; 0 or absent for the latest').optional(),
      depth: f.query(f.int({ min: 0 })).describe('Levels of keys to return; 0 for all').optional(),
    },
    operations: {
      read: {
        summary: 'Read the key structure of a secret without its values',
        handler: async (req) => {
          const r = await readVersion(store, keyPath(req.data.path), req.data.version ?? 0);
          if (!r) return null;
          if (!r.data) return { data: { subkeys: null, metadata: r.metadata }, status: 404 };
          return { data: { subkeys: subkeys(r.data, req.data.depth ?? 0), metadata: r.metadata } };
        },
      },
    },
    synopsis: 'Read the key structure of a secret without its values.',
    description: 'Leaf values are replaced by null; `depth` limits how deep nested objects are walked.',
  });
}
