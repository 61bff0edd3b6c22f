/**
 * The one due-time scheduler: keys with a due time (unix ms), one timer armed
 * for the earliest, `onDue(key)` called when a key comes due. Used for lease
 * and token expiry in the core and rotations in engines.
 *
 * It must hold a million leases compactly, so an entry is a slot number: the
 * key -> slot map is the only per-entry object; due times, the binary min-heap
 * of slots and each slot's heap position live in typed arrays (about 24 bytes
 * an entry beside the map). The heap is indexed, so rescheduling and
 * cancelling move the entry in place (O(log n)) and nothing stale is left
 * behind. A mass expiry is handed out in chunks with a yield between them, so
 * it never blocks the event loop for long.
 */
import { systemClock, type Clock } from './clock.js';

export interface DueScheduler {
  /** `key` comes due at `at` (unix ms), replacing the due time it had. */
  schedule(key: string, at: number): void;
  cancel(key: string): void;
  /** The due time of `key`, or undefined when it is not scheduled. */
  dueAt(key: string): number | undefined;
  size(): number;
  /** Keys scheduled, with their due times (a copy). */
  entries(): [string, number][];
  /** True while a mass expiry is being handed out in chunks (more due keys follow after a yield). */
  busy(): boolean;
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
const INITIAL_SLOTS = 64;

export function createDueScheduler(opts: DueSchedulerOptions): DueScheduler {
  const clock = opts.clock ?? systemClock;
  const chunk = opts.chunk ?? 10_000;

  const slotOf = new Map<string, number>();
  let keys: (string | undefined)[] = [];
  let dues = new Float64Array(INITIAL_SLOTS);
  /** heap[i]: the slot at heap position i; heapPos[slot]: where that slot sits in the heap. */
  let heap = new Int32Array(INITIAL_SLOTS);
  let heapPos = new Int32Array(INITIAL_SLOTS);
  let free: number[] = [];
  let n = 0;

  let timer: { handle: unknown; at: number } | null = null;
  let continuing = false;
  let running = !opts.stopped;

  const grow = (): void => {
    const cap = dues.length * 2;
    const d = new Float64Array(cap);
    d.set(dues);
    dues = d;
    const h = new Int32Array(cap);
    h.set(heap);
    heap = h;
    const p = new Int32Array(cap);
    p.set(heapPos);
    heapPos = p;
  };

  const place = (i: number, slot: number): void => {
    heap[i] = slot;
    heapPos[slot] = i;
  };

  const siftUp = (start: number): void => {
    const slot = heap[start]!;
    const at = dues[slot]!;
    let i = start;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = heap[parent]!;
      if (dues[p]! <= at) break;
      place(i, p);
      i = parent;
    }
    place(i, slot);
  };

  const siftDown = (start: number): void => {
    const slot = heap[start]!;
    const at = dues[slot]!;
    let i = start;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const m = r < n && dues[heap[r]!]! < dues[heap[l]!]! ? r : l;
      const c = heap[m]!;
      if (at <= dues[c]!) break;
      place(i, c);
      i = m;
    }
    place(i, slot);
  };

  /** Takes the slot at heap position i out of the heap and frees it. */
  const removeAt = (i: number): void => {
    const slot = heap[i]!;
    slotOf.delete(keys[slot]!);
    keys[slot] = undefined;
    free.push(slot);
    n--;
    if (i === n) return;
    const moved = heap[n]!;
    place(i, moved);
    siftDown(i);
    siftUp(heapPos[moved]!);
  };

  const earliest = (): number => (n === 0 ? Infinity : dues[heap[0]!]!);

  const disarm = (): void => {
    if (timer) clock.clearTimer(timer.handle);
    timer = null;
  };

  const arm = (): void => {
    if (!running || continuing) return;
    const at = earliest();
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
    while (n > 0 && earliest() <= now) {
      const slot = heap[0]!;
      const key = keys[slot]!;
      const at = dues[slot]!;
      removeAt(0);
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
      let slot = slotOf.get(key);
      if (slot !== undefined) {
        const old = dues[slot]!;
        dues[slot] = at;
        if (at < old) siftUp(heapPos[slot]!);
        else if (at > old) siftDown(heapPos[slot]!);
      } else {
        slot = free.pop();
        if (slot === undefined) {
          slot = keys.length;
          keys.push(key);
          if (slot >= dues.length) grow();
        } else {
          keys[slot] = key;
        }
        slotOf.set(key, slot);
        dues[slot] = at;
        place(n, slot);
        n++;
        siftUp(n - 1);
      }
      if (!timer || at < timer.at) arm();
    },
    cancel(key) {
      const slot = slotOf.get(key);
      if (slot !== undefined) removeAt(heapPos[slot]!);
    },
    dueAt(key) {
      const slot = slotOf.get(key);
      return slot === undefined ? undefined : dues[slot];
    },
    size: () => n,
    entries: () => [...slotOf].map(([key, slot]): [string, number] => [key, dues[slot]!]),
    busy: () => continuing,
    stop() {
      running = false;
      disarm();
    },
    start() {
      running = true;
      arm();
    },
    clear() {
      slotOf.clear();
      keys = [];
      free = [];
      n = 0;
      dues = new Float64Array(INITIAL_SLOTS);
      heap = new Int32Array(INITIAL_SLOTS);
      heapPos = new Int32Array(INITIAL_SLOTS);
      disarm();
    },
  };
}
