import { createFairQueue } from './fair-queue.js';

describe('fair queue', () => {
  it('serves mounts round-robin, not in arrival order', () => {
    const q = createFairQueue({ maxInFlight: 100, maxInFlightPerMount: 100 });
    for (let i = 0; i < 5; i++) q.push(0, `a${i}`);
    q.push(1, 'b0');
    q.push(1, 'b1');
    const order: string[] = [];
    for (let job = q.take(); job; job = q.take()) order.push(job.id);
    expect(order.slice(0, 4)).toEqual(['a0', 'b0', 'a1', 'b1']);
    expect(order).toHaveLength(7);
    expect(q.queued()).toBe(0);
    expect(q.inFlight()).toBe(7);
  });

  it('caps jobs in flight per mount so another mount still gets slots', () => {
    const q = createFairQueue({ maxInFlight: 4, maxInFlightPerMount: 2 });
    for (let i = 0; i < 10; i++) q.push(0, `a${i}`);
    expect(q.take()?.id).toBe('a0');
    expect(q.take()?.id).toBe('a1');
    expect(q.take()).toBeNull();
    q.push(1, 'b0');
    expect(q.take()).toEqual({ mount: 1, id: 'b0' });
    q.done(0);
    expect(q.take()?.id).toBe('a2');
  });

  it('caps jobs in flight overall', () => {
    const q = createFairQueue({ maxInFlight: 2, maxInFlightPerMount: 2 });
    q.push(0, 'a');
    q.push(1, 'b');
    q.push(2, 'c');
    expect(q.take()).not.toBeNull();
    expect(q.take()).not.toBeNull();
    expect(q.take()).toBeNull();
    q.done(0);
    expect(q.take()?.id).toBe('c');
  });

  it('keeps FIFO order within a mount across compaction', () => {
    const q = createFairQueue({ maxInFlight: 1, maxInFlightPerMount: 1 });
    for (let i = 0; i < 3000; i++) q.push(7, `x${i}`);
    for (let i = 0; i < 3000; i++) {
      expect(q.take()?.id).toBe(`x${i}`);
      q.done(7);
    }
    expect(q.take()).toBeNull();
  });
});
