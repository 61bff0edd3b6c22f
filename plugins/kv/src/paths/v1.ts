import { badRequest, definePath, getJSON, publishEvent, type PathDef, putJSON, scanStorage } from '@strongroom/sdk-plugin';
import { dirPrefix } from '../store.js';

/** kv version 1: the whole body is the secret, stored as is at `<path>` (no versions). */
export function v1Path(): PathDef {
  return definePath({
    pattern: '*path',
    arbitraryInput: true,
    existenceCheck: async (req) => req.captures.path !== '' && (await req.storage.get(req.captures.path ?? '')) !== null,
    operations: {
      read: {
        summary: 'Read a secret',
        handler: async (req) => {
          const path = req.captures.path ?? '';
          if (path === '' || path.endsWith('/')) return null;
          const data = await getJSON<Record<string, unknown>>(req.storage, path);
          return data ? { data } : null;
        },
      },
      list: {
        summary: 'List the secrets in a directory',
        handler: (req) => req.storage.list(dirPrefix(req.captures.path ?? '')),
      },
      scan: {
        summary: 'Every secret below a directory, at any depth (relative paths)',
        handler: scanStorage((req) => dirPrefix(req.captures.path ?? '')),
      },
      update: {
        summary: 'Write a secret (replaces it)',
        handler: async (req) => {
          const path = req.captures.path ?? '';
          if (path === '' || path.endsWith('/')) throw badRequest('missing path');
          if (Object.keys(req.raw.data).length === 0) throw badRequest('missing data fields');
          await putJSON(req.storage, path, req.raw.data);
          await publishEvent(req, 'kv-v1/write', path);
        },
      },
      delete: {
        summary: 'Delete a secret',
        handler: async (req) => {
          const path = req.captures.path ?? '';
          if (path === '') return;
          await req.storage.delete(path);
          await publishEvent(req, 'kv-v1/delete', path);
        },
      },
    },
    synopsis: 'Pass-through secret storage (kv version 1).',
    description: `A write stores the request body as the secret, replacing what was there. A read
returns it. LIST works on directories (paths ending in "/").`,
  });
}
