/**
 * The one due-time scheduler: keys with a due time (unix ms), one timer armed
 * for the earliest, `onDue(key)` called when a key comes due. Used for lease
 * and token expiry in the core and rotations in engines.
 *
 * The scheduler keeps the truth (key -> due) and a min-heap of (due, key);
 * rescheduling is a push and the stale heap entry is skipped when it reaches
 * the top (lazy deletion), so neither renewals nor cancellations search. A
 * mass expiry is handed out in chunks with a yield between them, so it never
 * blocks the event loop for long.
 */
import { systemClock, type Clock } from './clock.js';
import { createDueHeap } from './due-heap.js';

export interface DueScheduler {
  /** `key` comes due at `at` (unix ms), replacing the due time it had. */
  schedule(key: string, at: number): void;
  cancel(key: string): void;
  /** The due time of `key`, or undefined when it is not scheduled. */
  dueAt(key: string): number | undefined;
  size(): number;
  /** Keys scheduled, with their due times (a copy). */
  entries(): [string, number][];
  /** Disarms the timer; schedules are kept and fire after `start()`. */
  stop(): void;
  start(): void;
  clear(): void;
}

export interface DueSchedulerOptions {
  /** Called once per due key, after the key was unscheduled; must not throw (errors go to `onError`). */
  onDue(key: string, at: number): void;
  onError?(err: unknown, key: string): void;
  clock?: Clock;
  /** Keys handed out per timer turn before yielding to the event loop. */
  chunk?: number;
  /** Start disarmed (call `start()`); default false. */
  stopped?: boolean;
}

/** setTimeout's ceiling; a longer wait is taken in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export function createDueScheduler(opts: DueSchedulerOptions): DueScheduler {
  const clock = opts.clock ?? systemClock;
  const chunk = opts.chunk ?? 10_000;
  const due = new Map<string, number>();
  const heap = createDueHeap();
  let timer: { handle: unknown; at: number } | null = null;
  let continuing = false;
  let running = !opts.stopped;

  /** Due time of the earliest live heap entry, discarding stale ones on the way. */
  const peekLive = (): number => {
    for (;;) {
      const key = heap.peekId();
      if (key === undefined) return Infinity;
      const at = heap.peekDue();
      if (due.get(key) === at) return at;
      heap.pop();
    }
  };

  const disarm = () => {
    if (timer) clock.clearTimer(timer.handle);
    timer = null;
  };

  const arm = (): void => {
    if (!running || continuing) return;
    const at = peekLive();
    if (timer && timer.at <= at) return;
    disarm();
    if (at === Infinity) return;
    timer = { handle: clock.setTimer(fire, Math.min(Math.max(0, at - clock.now()), MAX_TIMER_MS)), at };
  };

  function fire(): void {
    timer = null;
    continuing = false;
    if (!running) return;
    const now = clock.now();
    let handed = 0;
    while (peekLive() <= now) {
      const key = heap.peekId() as string;
      const at = heap.peekDue();
      heap.pop();
      due.delete(key);
      try {
        opts.onDue(key, at);
      } catch (err) {
        opts.onError?.(err, key);
      }
      if (++handed >= chunk) {
        continuing = true;
        setImmediate(fire);
        return;
      }
    }
    arm();
  }

  return {
    schedule(key, at) {
      due.set(key, at);
      heap.push(at, key);
      // Lazy deletion leaves stale entries behind; rebuild once they outnumber the live ones.
      if (heap.size() > 2 * due.size + 1024) heap.rebuild([...due].map(([k, t]): [number, string] => [t, k]));
      if (!timer || at < timer.at) arm();
    },
    cancel(key) {
      due.delete(key);
    },
    dueAt: (key) => due.get(key),
    size: () => due.size,
    entries: () => [...due],
    stop() {
      running = false;
      disarm();
    },
    start() {
      running = true;
      arm();
    },
    clear() {
      due.clear();
      heap.clear();
      disarm();
    },
  };
}
