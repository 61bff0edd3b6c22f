/**
 * The cubbyhole secrets engine (Vault's `cubbyhole`), in process: a kv
 * version 1 store whose every key is under the calling token's folder
 * (cubbyholes.ts). A plugin never sees token ids, so it cannot be one.
 * Batch tokens have none, as in Vault (they are not stored, so nothing
 * would ever destroy it).
 */
import { badRequest, defineBackend, definePath, getJSON, permissionDenied, putJSON, scanStorage, type BackendFactory, type HandlerRequest } from '@strongroom/sdk-plugin/host';
import type { InProcessRequest } from '../request/ports.js';
import type { StorageView } from '../storage/view.js';
import type { Cubbyholes } from './cubbyholes.js';

export function createCubbyholeBackend(deps: { cubbyholes: Pick<Cubbyholes, 'ofMount'> }): BackendFactory {
  /** The caller's own cubbyhole: the only one a request can reach. */
  function own(req: Pick<HandlerRequest<unknown>, 'raw' | 'mount'>): StorageView {
    const caller = (req.raw as InProcessRequest).callerEntry;
    if (!caller) throw permissionDenied();
    if (caller.type !== 'service') throw badRequest("cubbyhole operations are only supported by 'service' type tokens");
    const box = deps.cubbyholes.ofMount(req.mount.uuid, caller.key);
    if (!box) throw badRequest('the cubbyhole mount is not available');
    return box;
  }
  const dir = (path: string) => (path === '' || path.endsWith('/') ? path : `${path}/`);

  /** A write replaces the whole secret with the body (kv version 1). */
  async function write(req: HandlerRequest<unknown>): Promise<null> {
    const path = req.captures.path ?? '';
    const box = own(req);
    if (path === '' || path.endsWith('/')) throw badRequest('path: missing path');
    if (Object.keys(req.raw.data).length === 0) throw badRequest('missing data fields');
    await putJSON(box, path, req.raw.data);
    return null;
  }

  return defineBackend({
    type: 'secret',
    help: `Each token's private secret storage. A token reads and writes only its own
cubbyhole; no other token, root included, can see it. It is destroyed with
its token.`,
    paths: [
      definePath({
        pattern: '*path',
        arbitraryInput: true,
        existenceCheck: async (req) => {
          const path = req.captures.path ?? '';
          return path !== '' && (await own(req).get(path)) !== null;
        },
        operations: {
          read: {
            summary: 'Read the secret at this path of the caller\'s cubbyhole.',
            handler: async (req) => {
              const path = req.captures.path ?? '';
              const box = own(req);
              if (path === '' || path.endsWith('/')) return null;
              const data = await getJSON<Record<string, unknown>>(box, path);
              return data ? { data } : null;
            },
          },
          list: {
            summary: 'List a folder of the caller\'s cubbyhole (folders end in "/").',
            handler: (req) => own(req).list(dir(req.captures.path ?? '')),
          },
          scan: {
            summary: 'Every secret below a folder of the caller\'s cubbyhole, at any depth (relative paths).',
            handler: scanStorage((req) => dir(req.captures.path ?? ''), own),
          },
          create: { summary: 'Store a secret (the whole body) at this path.', handler: (req) => write(req) },
          update: { summary: 'Replace the secret at this path with the body.', handler: (req) => write(req) },
          delete: {
            summary: 'Delete the secret at this path.',
            handler: async (req) => {
              const path = req.captures.path ?? '';
              const box = own(req);
              if (path !== '') await box.delete(path);
            },
          },
        },
        synopsis: "Pass-through secret storage in the calling token's own cubbyhole.",
        description: `The body of a write is stored as the secret (kv version 1: no versions) in a
space only the calling token can see; it is removed when the token is revoked
or expires.`,
      }),
    ],
  });
}
