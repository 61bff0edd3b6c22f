/**
 * Revocation queue: one FIFO per mount, served round-robin, with a cap on the jobs in
 * flight overall and per mount. A mount whose backend hangs or fails can hold at most its
 * own share of the slots, so every other mount's revocations keep moving (DESIGN.md 5).
 */
export interface FairQueue {
  push(mount: number, id: string): void;
  /** Next (mount, id) whose mount is under its cap, or null when none may start now. */
  take(): { mount: number; id: string } | null;
  /** Marks one job of this mount finished (frees its slots). */
  done(mount: number): void;
  queued(): number;
  inFlight(): number;
  clear(): void;
}

interface MountFifo {
  ids: string[];
  head: number;
  running: number;
}

export function createFairQueue(opts: { maxInFlight: number; maxInFlightPerMount: number }): FairQueue {
  const fifos = new Map<number, MountFifo>();
  /** Mounts with queued ids, in round-robin order; `cursor` is the next to serve. */
  let ring: number[] = [];
  let cursor = 0;
  let queuedCount = 0;
  let running = 0;

  const fifoOf = (mount: number): MountFifo => {
    let f = fifos.get(mount);
    if (!f) {
      f = { ids: [], head: 0, running: 0 };
      fifos.set(mount, f);
    }
    return f;
  };

  return {
    push(mount, id) {
      const f = fifoOf(mount);
      if (f.head === f.ids.length) ring.push(mount);
      f.ids.push(id);
      queuedCount++;
    },
    take() {
      if (running >= opts.maxInFlight) return null;
      for (let tried = 0; tried < ring.length; tried++) {
        if (cursor >= ring.length) cursor = 0;
        const mount = ring[cursor]!;
        const f = fifos.get(mount)!;
        if (f.running >= opts.maxInFlightPerMount) {
          cursor++;
          continue;
        }
        const id = f.ids[f.head]!;
        f.head++;
        f.running++;
        running++;
        queuedCount--;
        if (f.head === f.ids.length) {
          f.ids = [];
          f.head = 0;
          ring.splice(cursor, 1);
        } else {
          // Compact now and then so a long FIFO does not keep its consumed prefix alive.
          if (f.head > 1024 && f.head * 2 > f.ids.length) {
            f.ids = f.ids.slice(f.head);
            f.head = 0;
          }
          cursor++;
        }
        return { mount, id };
      }
      return null;
    },
    done(mount) {
      const f = fifos.get(mount);
      if (f && f.running > 0) {
        f.running--;
        running--;
      }
    },
    queued: () => queuedCount,
    inFlight: () => running,
    clear() {
      fifos.clear();
      ring = [];
      cursor = 0;
      queuedCount = 0;
      running = 0;
    },
  };
}
