/**
 * sys/storage/snapshot (a snapshot, streamed) and sys/storage/snapshot-restore
 * (and -force, Vault's name for restoring another barrier's snapshot): root
 * namespace, sudo (sys/backend.ts). The restore's body is the snapshot file,
 * streamed in (the listener's streamed uploads); this path verifies and stages
 * it, and the core applies it once the reply is ready (snapshot/snapshots.ts).
 */
import type { InProcessRequest, InProcessResponse } from '../request/ports.js';
import type { Snapshots } from '../snapshot/snapshots.js';
import { defineSysPath, type SysPathDef } from './sys-path.js';

/** The restore paths as the listener sees them (after /v1/): their bodies reach the handler unread. */
export const SNAPSHOT_RESTORE_URL = /^\/v1\/sys\/storage\/snapshot-restore(-force)?\/?(\?.*)?$/;

export function snapshotPaths(deps: { snapshots: Pick<Snapshots, 'save' | 'stage'> }): SysPathDef[] {
  const restore = (force: boolean) => async (req: { raw: InProcessRequest }) => {
    await deps.snapshots.stage(req.raw.id, req.raw.bodyStream, force);
    return null;
  };
  return [
    defineSysPath({
      rootOnly: true,
      pattern: 'storage/snapshot',
      synopsis: 'A point-in-time snapshot of the whole store, still encrypted by the barrier, with a checksum (application/octet-stream, streamed).',
      operations: {
        read: { summary: 'Take a snapshot.', handler: async (): Promise<InProcessResponse> => ({ stream: { stream: deps.snapshots.save(), contentType: 'application/octet-stream' } }) },
      },
    }),
    defineSysPath({
      rootOnly: true,
      pattern: 'storage/snapshot-restore',
      synopsis: "Replace the whole store with a snapshot of this barrier (the request body); state is reloaded from it. A corrupt, truncated or other barrier's snapshot is refused and nothing changes.",
      operations: { update: { summary: 'Restore a snapshot.', handler: restore(false) } },
    }),
    defineSysPath({
      rootOnly: true,
      pattern: 'storage/snapshot-restore-force',
      synopsis: "Restore a snapshot even if it is another barrier's; the server then seals and that barrier's unseal keys open it.",
      operations: { update: { summary: 'Restore a snapshot, forced.', handler: restore(true) } },
    }),
  ];
}
