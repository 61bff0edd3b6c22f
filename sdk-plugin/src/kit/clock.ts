/**
 * The time source of the expiration manager, injectable so tests move time by hand
 * and can count the timers armed (the manager must arm at most one).
 */
export interface Clock {
  /** Unix milliseconds. */
  now(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const t = setTimeout(fn, ms);
    // The lease timer must never be what keeps a process alive (CLI, tests, bench).
    t.unref();
    return t;
  },
  clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface ManualClock extends Clock {
  /** Moves time forward, firing due timers in time order (each sees its own due time as now). */
  advance(ms: number): void;
  /** Timers armed and not yet fired or cleared. */
  armedTimers(): number;
}

/** A clock that only moves when told to, for tests and the bench. */
export function createManualClock(start = Date.UTC(2025, 0, 1)): ManualClock {
  let now = start;
  let nextHandle = 1;
  const timers = new Map<number, { at: number; fn: () => void }>();

  return {
    now: () => now,
    setTimer(fn, ms) {
      const handle = nextHandle++;
      timers.set(handle, { at: now + Math.max(0, ms), fn });
      return handle;
    },
    clearTimer(handle) {
      timers.delete(handle as number);
    },
    advance(ms) {
      const target = now + ms;
      for (;;) {
        let first: number | undefined;
        let firstAt = Infinity;
        for (const [h, t] of timers) {
          if (t.at <= target && t.at < firstAt) {
            first = h;
            firstAt = t.at;
          }
        }
        if (first === undefined) break;
        const t = timers.get(first)!;
        timers.delete(first);
        now = Math.max(now, t.at);
        t.fn();
      }
      now = target;
    },
    armedTimers: () => timers.size,
  };
}
