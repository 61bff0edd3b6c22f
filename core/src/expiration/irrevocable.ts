/**
 * Irrevocable-lease reporting (sys/leases?type=irrevocable and sys/leases/count): pure views
 * over what the manager holds in memory. A lease is irrevocable once its revocation failed
 * unrecoverably or too often; it stays listed, with the engine's (scrubbed) error, until a
 * retry or revoke-force removes it: never forgotten silently.
 */
import type { IrrevocableCount, IrrevocableLease, IrrevocableList } from './types.js';

/** A mount as leases in memory name it (by ordinal): its uuid, route path and namespace ('' for root). */
export interface MountRef {
  uuid: string;
  path: string;
  namespaceId: string;
}

export interface IrrevocableInfo {
  /** Ordinal into the manager's mount list. */
  mount: number;
  expireTime: number;
  reason: string;
}

/** The irrevocable leases of the namespaces `include` accepts, sorted by id, at most `cap` listed. */
export function listIrrevocable(
  leases: ReadonlyMap<string, IrrevocableInfo>,
  mounts: readonly MountRef[],
  include: (namespaceId: string) => boolean,
  cap: number,
  restoring: boolean,
): IrrevocableList {
  const ids: string[] = [];
  for (const [id, info] of leases) if (include(mounts[info.mount]!.namespaceId)) ids.push(id);
  ids.sort();
  const warnings: string[] = [];
  if (ids.length > cap) warnings.push(`${ids.length} irrevocable leases exist; only ${cap} are listed, use limit=none to list them all`);
  if (restoring) warnings.push('leases are still being restored; this list may be incomplete');
  const listed = ids.slice(0, Math.min(ids.length, cap)).map((id): IrrevocableLease => {
    const info = leases.get(id)!;
    const mount = mounts[info.mount]!;
    return {
      lease_id: id,
      mount_id: mount.uuid,
      mount_path: mount.path,
      namespace_id: mount.namespaceId,
      expire_time: new Date(info.expireTime).toISOString(),
      error: info.reason,
    };
  });
  return { leaseCount: ids.length, leases: listed, warnings };
}

/** How many irrevocable leases the namespaces `include` accepts hold, in all and per mount uuid. */
export function countIrrevocable(leases: ReadonlyMap<string, IrrevocableInfo>, mounts: readonly MountRef[], include: (namespaceId: string) => boolean): IrrevocableCount {
  const counts: Record<string, number> = {};
  let leaseCount = 0;
  for (const info of leases.values()) {
    const mount = mounts[info.mount]!;
    if (!include(mount.namespaceId)) continue;
    counts[mount.uuid] = (counts[mount.uuid] ?? 0) + 1;
    leaseCount++;
  }
  return { leaseCount, counts };
}
