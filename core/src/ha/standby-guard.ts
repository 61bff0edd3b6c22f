/**
 * Where a standby's "this request writes, so it goes to the active node" is
 * decided: at the storage itself. While the node is a standby every write
 * (put, delete, batch) through the physical layer is refused before it
 * reaches the database, so nothing is ever written; the request that tried
 * is then forwarded whole (ha/standby.ts). Engines need no knowledge of HA.
 *
 * Which request tried: a write made by the core runs in the request's async
 * context, so it marks that request. A write made by a plugin process arrives
 * through the plugin's storage callback, outside any request's context, so it
 * marks every standby request in flight when it happened: some reads may then
 * be forwarded too (harmless: the active node answers them), but no request
 * that wrote can be answered from the standby.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { StrongroomError } from '@strongroom/sdk-plugin/host';
import type { Physical, PhysicalOp } from '../storage/physical.js';

class StandbyWriteError extends StrongroomError {
  constructor() {
    super('unavailable', 'a standby node does not write: the request is forwarded to the active node');
  }
}

export interface StandbyGuard {
  /** True while this node must not write (a standby). */
  readOnly: boolean;
  /** `physical` with every write refused while read-only. */
  wrap(physical: Physical): Physical;
  /** Runs `fn` as one request served on the standby; `wrote` is true when a write was refused meanwhile (see the header). */
  attempt<T>(fn: () => Promise<T>): Promise<{ wrote: boolean; outcome: { ok: true; value: T } | { ok: false; error: unknown } }>;
}

export function createStandbyGuard(): StandbyGuard {
  const context = new AsyncLocalStorage<{ wrote: boolean }>();
  /** Writes refused outside any request's context (plugin storage callbacks). */
  let outside = 0;
  const refused = (): Promise<never> => {
    const c = context.getStore();
    if (c) c.wrote = true;
    else outside++;
    return Promise.reject(new StandbyWriteError());
  };
  const guard: StandbyGuard = {
    readOnly: false,
    wrap(physical) {
      return {
        get: (k) => physical.get(k),
        list: (p) => physical.list(p),
        scan: (p) => physical.scan(p),
        scanKeys: (p, range) => physical.scanKeys(p, range),
        ...(physical.scanKeyPages ? { scanKeyPages: (p: string) => physical.scanKeyPages!(p) } : {}),
        close: () => physical.close(),
        ...(physical.snapshots
          ? { snapshots: { read: () => physical.snapshots!.read(), stagingDir: physical.snapshots.stagingDir, restore: (f: string) => (guard.readOnly ? refused() : physical.snapshots!.restore(f)) } }
          : {}),
        put: (k, v) => (guard.readOnly ? refused() : physical.put(k, v)),
        delete: (k) => (guard.readOnly ? refused() : physical.delete(k)),
        batch: (ops: PhysicalOp[]) => (guard.readOnly && ops.length > 0 ? refused() : physical.batch(ops)),
      };
    },
    async attempt(fn) {
      const c = { wrote: false };
      const before = outside;
      let outcome: { ok: true; value: Awaited<ReturnType<typeof fn>> } | { ok: false; error: unknown };
      try {
        outcome = { ok: true, value: await context.run(c, fn) };
      } catch (error) {
        outcome = { ok: false, error };
      }
      return { wrote: c.wrote || outside !== before, outcome };
    },
  };
  return guard;
}
