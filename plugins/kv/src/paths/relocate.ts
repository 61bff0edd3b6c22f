import { badRequest, definePath, f, notFound, publishEvent, type AclRequirement, type PathDef } from '@strongroom/sdk-plugin';
import { keyPath, type KvStore } from '../store.js';

/**
 * `move/:path` and `copy/:path` (kv v2): a secret with its versions, metadata and custom
 * metadata goes to `destination` inside the mount, in one storage batch. The value stays in
 * this process: the caller needs no `read` to move. What the core checks instead of the
 * request's own path (`authorize`):
 * - move: `update` on the source's metadata path and `delete` on its data path;
 * - copy: `read` on the source's data path;
 * - both: `create` on the destination's data path, and `update` there too with `overwrite`.
 * Events for both ends: `kv-v2/move-from` or `copy-from` on the source's data path, `move-to` or
 * `copy-to` on the destination's.
 */
export function relocatePaths(store: KvStore): PathDef[] {
  return (['move', 'copy'] as const).map((action) => {
    const move = action === 'move';
    const destination: AclRequirement[] = [
      { path: 'data/{destination}', capability: 'create' },
      { path: 'data/{destination}', capability: 'update', when: 'overwrite' },
    ];
    const source: AclRequirement[] = move
      ? [
          { path: 'metadata/{path}', capability: 'update' },
          { path: 'data/{path}', capability: 'delete' },
        ]
      : [{ path: 'data/{path}', capability: 'read' }];
    return definePath({
      pattern: `${action}/*path`,
      fields: {
        path: f.string().describe('Location of the secret to ' + action),
        destination: f.string().describe('Where it goes, a path inside this mount'),
        overwrite: f.bool().describe('Replace a secret already at the destination (versions and metadata)').default(false),
      },
      authorize: { update: [...source, ...destination] },
      operations: {
        update: {
          summary: move ? 'Move a secret (all versions and metadata) to another path of the mount' : 'Copy a secret (all versions and metadata) to another path of the mount',
          handler: async (req) => {
            const from = keyPath(req.data.path);
            const to = destinationPath(req.data.destination);
            if (from === to) throw badRequest('field "destination": the secret is already there');
            // Both keys' locks, in one order: a concurrent write to either lands before or after, never in between.
            const [first, second] = from < to ? [from, to] : [to, from];
            const moved = await store.withKey(first, () =>
              store.withKey(second, async () => {
                const m = await store.relocate(from, to, { move, overwrite: req.data.overwrite });
                // Both ends, under both locks: each key's events keep the order of its changes.
                if (m) {
                  await publishEvent(req, `kv-v2/${action}-from`, `data/${from}`, { destination: to, version: m.current_version });
                  await publishEvent(req, `kv-v2/${action}-to`, `data/${to}`, { source: from, version: m.current_version });
                }
                return m;
              }),
            );
            if (!moved) throw notFound(`no secret at ${from}`);
            return { data: { path: to, current_version: moved.current_version } };
          },
        },
      },
      synopsis: move ? 'Move a secret inside the mount.' : 'Copy a secret inside the mount.',
      description: `All versions, the metadata and the custom metadata travel together in one storage
batch; the value is never read back to the caller. A destination that exists is refused (409)
unless \`overwrite\` is true.`,
    });
  });
}

/**
 * A destination exactly as the core's ACL check names it: a relative key path without empty,
 * "." or ".." segments, so the path authorised is the path written.
 */
function destinationPath(d: string): string {
  const segments = d.split('/');
  if (d === '' || d.includes('\0') || segments.some((s) => s === '' || s === '.' || s === '..')) {
    throw badRequest('field "destination": must be a path inside the mount without empty, "." or ".." segments (no leading or trailing "/")');
  }
  return d;
}
