import { createDueHeap } from './due-heap.js';

describe('due heap', () => {
  it('pops entries in due order whatever the push order', () => {
    const heap = createDueHeap();
    const dues = [50, 10, 40, 10, 30, 20, 60, 0];
    dues.forEach((d, i) => heap.push(d, `id${i}`));
    const out: number[] = [];
    while (heap.size() > 0) {
      out.push(heap.peekDue());
      heap.pop();
    }
    expect(out).toEqual([...dues].sort((a, b) => a - b));
    expect(heap.peekDue()).toBe(Infinity);
    expect(heap.peekId()).toBeUndefined();
  });

  it('keeps order over many random entries and after a rebuild', () => {
    const heap = createDueHeap();
    const entries: [number, string][] = [];
    for (let i = 0; i < 5000; i++) entries.push([Math.floor(Math.random() * 1e6), `l${i}`]);
    heap.rebuild(entries);
    let last = -1;
    let n = 0;
    while (heap.size() > 0) {
      const d = heap.peekDue();
      expect(d).toBeGreaterThanOrEqual(last);
      last = d;
      heap.pop();
      n++;
    }
    expect(n).toBe(5000);
  });

  it('keeps the id with its due time', () => {
    const heap = createDueHeap();
    heap.push(3, 'c');
    heap.push(1, 'a');
    heap.push(2, 'b');
    expect(heap.peekId()).toBe('a');
    heap.pop();
    expect(heap.peekId()).toBe('b');
  });
});
