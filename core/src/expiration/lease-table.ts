/**
 * What the expiration manager holds in memory per lease: one small integer (a V8 Smi, no
 * object), mount ordinal * 4 + state, so a million leases cost little more than a Map of
 * their ids (measured by scripts/bench/lease-bench.js). Mounts are named once, by ordinal;
 * irrevocable leases keep their reason apart (they are few). Lease bodies stay in storage.
 */
import { isRootNamespace } from './lease-entry.js';
import type { IrrevocableInfo, MountRef } from './irrevocable.js';

/** Waiting on the timer. */
export const SCHEDULED = 0;
/** In its mount's revocation FIFO. */
export const QUEUED = 1;
/** Being revoked. */
export const REVOKING = 2;

const pack = (mount: number, state: number): number => mount * 4 + state;
const mountOf = (v: number): number => v >>> 2;
const stateOf = (v: number): number => v & 3;

export interface LeaseTable {
  readonly mounts: readonly MountRef[];
  readonly irrevocable: ReadonlyMap<string, IrrevocableInfo>;
  size(): number;
  has(id: string): boolean;
  /** The state of a held lease; undefined when not held. */
  state(id: string): number | undefined;
  /** The mount ordinal of a held lease; undefined when not held. */
  mountOf(id: string): number | undefined;
  /** Holds the lease (SCHEDULED) when it is not held yet; returns its state. */
  hold(id: string, mount: { mountUuid: string; mountPath: string; namespaceId: string; quotaRole?: string | undefined }): number;
  /** Moves a held lease to `state`; false when it is not held. */
  setState(id: string, state: number): boolean;
  /** Records a held lease as irrevocable. */
  markIrrevocable(id: string, expireTime: number, reason: string): void;
  forget(id: string): void;
  /** Leases held per mount path and namespace. */
  countByMount(): Array<{ mountPath: string; namespaceId: string; count: number }>;
  /** Every held lease with its mount. */
  forEach(fn: (id: string, mount: MountRef) => void): void;
  clear(): void;
}

/** Told of each lease the table starts and stops holding (quota counts); not on clear (a seal). */
export interface LeaseTableObserver {
  /** `quotaRole`: the login role a lease-count quota counted it under (lease-entry.ts). */
  held?(id: string, mount: MountRef, quotaRole: string | undefined): void;
  dropped?(id: string, mount: MountRef): void;
}

export function createLeaseTable(observer: LeaseTableObserver = {}): LeaseTable {
  let index = new Map<string, number>();
  const mounts: MountRef[] = [];
  const ordinals = new Map<string, number>();
  let irrevocable = new Map<string, IrrevocableInfo>();

  // The last mount named: a restore names the same one for long runs of leases.
  let lastUuid = '';
  let lastOrdinal = -1;
  const ordinal = (uuid: string, path: string, namespaceId: string): number => {
    if (uuid === lastUuid) return lastOrdinal;
    let n = ordinals.get(uuid);
    if (n === undefined) {
      n = mounts.length;
      mounts.push({ uuid, path, namespaceId: isRootNamespace(namespaceId) ? '' : namespaceId });
      ordinals.set(uuid, n);
    }
    lastUuid = uuid;
    lastOrdinal = n;
    return n;
  };

  return {
    mounts,
    get irrevocable() {
      return irrevocable;
    },
    size: () => index.size,
    has: (id) => index.has(id),
    state(id) {
      const v = index.get(id);
      return v === undefined ? undefined : stateOf(v);
    },
    mountOf(id) {
      const v = index.get(id);
      return v === undefined ? undefined : mountOf(v);
    },
    hold(id, m) {
      let v = index.get(id);
      if (v === undefined) {
        const ord = ordinal(m.mountUuid, m.mountPath, m.namespaceId);
        v = pack(ord, SCHEDULED);
        index.set(id, v);
        observer.held?.(id, mounts[ord]!, m.quotaRole);
      }
      return stateOf(v);
    },
    setState(id, state) {
      const v = index.get(id);
      if (v === undefined) return false;
      index.set(id, pack(mountOf(v), state));
      return true;
    },
    markIrrevocable(id, expireTime, reason) {
      const v = index.get(id);
      if (v !== undefined) irrevocable.set(id, { mount: mountOf(v), expireTime, reason });
    },
    forget(id) {
      const v = index.get(id);
      index.delete(id);
      irrevocable.delete(id);
      if (v !== undefined) observer.dropped?.(id, mounts[mountOf(v)]!);
    },
    countByMount() {
      const perOrdinal = new Map<number, number>();
      for (const v of index.values()) perOrdinal.set(mountOf(v), (perOrdinal.get(mountOf(v)) ?? 0) + 1);
      const out = new Map<string, { mountPath: string; namespaceId: string; count: number }>();
      for (const [ord, n] of perOrdinal) {
        const m = mounts[ord];
        const key = `${m?.namespaceId ?? ''}\u0000${m?.path ?? 'unknown'}`;
        const cur = out.get(key) ?? { mountPath: m?.path ?? 'unknown', namespaceId: m?.namespaceId ?? '', count: 0 };
        cur.count += n;
        out.set(key, cur);
      }
      return [...out.values()];
    },
    forEach(fn) {
      for (const [id, v] of index) fn(id, mounts[mountOf(v)]!);
    },
    clear() {
      index = new Map();
      irrevocable = new Map();
    },
  };
}
