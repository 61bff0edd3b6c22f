/**
 * Min-heap of (expireTime, token key): the one timer structure behind token
 * expiry. Entries are never removed on renewal or revocation; the sweeper
 * re-reads the token and skips stale entries (lazy deletion).
 */
export interface HeapItem {
  at: number;
  key: string;
}

export interface ExpiryHeap {
  push(item: HeapItem): void;
  peek(): HeapItem | undefined;
  pop(): HeapItem | undefined;
  readonly size: number;
  clear(): void;
}

export function createExpiryHeap(): ExpiryHeap {
  const a: HeapItem[] = [];
  const less = (i: number, j: number): boolean => (a[i] as HeapItem).at < (a[j] as HeapItem).at;
  const swap = (i: number, j: number): void => {
    const t = a[i] as HeapItem;
    a[i] = a[j] as HeapItem;
    a[j] = t;
  };
  return {
    push(item) {
      a.push(item);
      let i = a.length - 1;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!less(i, p)) break;
        swap(i, p);
        i = p;
      }
    },
    peek: () => a[0],
    pop() {
      const top = a[0];
      const last = a.pop();
      if (a.length > 0 && last !== undefined) {
        a[0] = last;
        let i = 0;
        for (;;) {
          const l = 2 * i + 1;
          const r = l + 1;
          let m = i;
          if (l < a.length && less(l, m)) m = l;
          if (r < a.length && less(r, m)) m = r;
          if (m === i) break;
          swap(i, m);
          i = m;
        }
      }
      return top;
    },
    get size() {
      return a.length;
    },
    clear() {
      a.length = 0;
    },
  };
}
