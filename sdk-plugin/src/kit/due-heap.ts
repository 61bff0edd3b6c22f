/**
 * A binary min-heap of (due time, lease id), the one ordered timer structure of the
 * expiration manager. Two parallel arrays (doubles and string references) keep it at
 * about 12-16 bytes an entry. Deletion is lazy: the owner keeps the truth (id -> due) and
 * discards entries that no longer match it when they reach the top, so rescheduling is a
 * push and never a search.
 */
export interface DueHeap {
  push(due: number, id: string): void;
  /** Due time of the top entry, or Infinity when empty. */
  peekDue(): number;
  /** Id of the top entry (undefined when empty). */
  peekId(): string | undefined;
  pop(): void;
  size(): number;
  /** Rebuilds from the given live entries (drops every stale one) in O(n). */
  rebuild(entries: Iterable<[number, string]>): void;
  clear(): void;
}

export function createDueHeap(): DueHeap {
  let times: number[] = [];
  let ids: string[] = [];

  const swap = (a: number, b: number): void => {
    const t = times[a]!;
    times[a] = times[b]!;
    times[b] = t;
    const i = ids[a]!;
    ids[a] = ids[b]!;
    ids[b] = i;
  };

  const siftUp = (start: number): void => {
    let i = start;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (times[parent]! <= times[i]!) break;
      swap(i, parent);
      i = parent;
    }
  };

  const siftDown = (start: number): void => {
    const n = times.length;
    let i = start;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const m = r < n && times[r]! < times[l]! ? r : l;
      if (times[i]! <= times[m]!) break;
      swap(i, m);
      i = m;
    }
  };

  return {
    push(due, id) {
      times.push(due);
      ids.push(id);
      siftUp(times.length - 1);
    },
    peekDue: () => (times.length === 0 ? Infinity : times[0]!),
    peekId: () => ids[0],
    pop() {
      const n = times.length;
      if (n === 0) return;
      const lastT = times.pop()!;
      const lastId = ids.pop()!;
      if (n === 1) return;
      times[0] = lastT;
      ids[0] = lastId;
      siftDown(0);
    },
    size: () => times.length,
    rebuild(entries) {
      times = [];
      ids = [];
      for (const [due, id] of entries) {
        times.push(due);
        ids.push(id);
      }
      for (let i = (times.length >> 1) - 1; i >= 0; i--) siftDown(i);
    },
    clear() {
      times = [];
      ids = [];
    },
  };
}
