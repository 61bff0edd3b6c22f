import { createManualClock } from './clock.js';
import { createDueScheduler } from './due-scheduler.js';

describe('due scheduler', () => {
  it('fires each key once at its due time, in due order, with one timer armed', () => {
    const clock = createManualClock(0);
    const fired: [string, number][] = [];
    const s = createDueScheduler({ clock, onDue: (k, at) => fired.push([k, at]) });
    s.schedule('b', 200);
    s.schedule('a', 100);
    s.schedule('c', 300);
    expect(clock.armedTimers()).toBe(1);
    clock.advance(150);
    expect(fired).toEqual([['a', 100]]);
    clock.advance(1000);
    expect(fired).toEqual([
      ['a', 100],
      ['b', 200],
      ['c', 300],
    ]);
    expect(s.size()).toBe(0);
    expect(clock.armedTimers()).toBe(0);
  });

  it('reschedules and cancels without firing the stale time', () => {
    const clock = createManualClock(0);
    const fired: string[] = [];
    const s = createDueScheduler({ clock, onDue: (k) => fired.push(k) });
    s.schedule('a', 100);
    s.schedule('a', 500);
    s.schedule('b', 100);
    s.cancel('b');
    expect(s.dueAt('a')).toBe(500);
    clock.advance(200);
    expect(fired).toEqual([]);
    clock.advance(400);
    expect(fired).toEqual(['a']);
  });

  it('holds schedules while stopped and fires what came due on start', () => {
    const clock = createManualClock(0);
    const fired: string[] = [];
    const s = createDueScheduler({ clock, onDue: (k) => fired.push(k), stopped: true });
    s.schedule('a', 10);
    clock.advance(100);
    expect(fired).toEqual([]);
    s.start();
    clock.advance(0);
    expect(fired).toEqual(['a']);
  });

  it('keeps running when onDue throws', () => {
    const clock = createManualClock(0);
    const errors: string[] = [];
    const fired: string[] = [];
    const s = createDueScheduler({
      clock,
      onDue: (k) => {
        if (k === 'bad') throw new Error('boom');
        fired.push(k);
      },
      onError: (_e, k) => errors.push(k),
    });
    s.schedule('bad', 10);
    s.schedule('good', 20);
    clock.advance(50);
    expect(errors).toEqual(['bad']);
    expect(fired).toEqual(['good']);
  });

  it('hands a mass expiry out in chunks, yielding between them', async () => {
    const clock = createManualClock(0);
    let fired = 0;
    const s = createDueScheduler({ clock, chunk: 10, onDue: () => void fired++ });
    for (let i = 0; i < 35; i++) s.schedule(`k${i}`, 5);
    clock.advance(10);
    expect(fired).toBe(10);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(fired).toBe(35);
  });

  it('keeps due order over many keys rescheduled and cancelled at random, reusing freed slots', () => {
    const clock = createManualClock(0);
    const fired: [string, number][] = [];
    const s = createDueScheduler({ clock, chunk: 1_000_000, onDue: (k, at) => fired.push([k, at]) });
    const want = new Map<string, number>();
    let seed = 7;
    const rand = (m: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % m;
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 3000; i++) {
        const key = `k${rand(2000)}`;
        if (rand(4) === 0) {
          s.cancel(key);
          want.delete(key);
        } else {
          const at = 1 + rand(1_000_000);
          s.schedule(key, at);
          want.set(key, at);
        }
      }
      expect(s.size()).toBe(want.size);
      for (const [k, at] of want) expect(s.dueAt(k)).toBe(at);
    }
    clock.advance(1_000_001);
    expect(fired.map(([, at]) => at)).toEqual([...want.values()].sort((a, b) => a - b));
    expect(new Map(fired)).toEqual(want);
    expect(s.size()).toBe(0);
    expect(s.entries()).toEqual([]);
  });

  it('moves a key earlier or later in place, re-arming the one timer', () => {
    const clock = createManualClock(0);
    const fired: string[] = [];
    const s = createDueScheduler({ clock, onDue: (k) => fired.push(k) });
    s.schedule('a', 100);
    s.schedule('b', 200);
    s.schedule('b', 50);
    expect(clock.armedTimers()).toBe(1);
    clock.advance(60);
    expect(fired).toEqual(['b']);
    s.schedule('a', 1000);
    clock.advance(500);
    expect(fired).toEqual(['b']);
    clock.advance(500);
    expect(fired).toEqual(['b', 'a']);
    expect(clock.armedTimers()).toBe(0);
  });

  it('says it is busy while a chunked hand-out continues', async () => {
    const clock = createManualClock(0);
    const s = createDueScheduler({ clock, chunk: 2, onDue: () => undefined });
    for (let i = 0; i < 5; i++) s.schedule(`k${i}`, 1);
    clock.advance(1);
    expect(s.busy()).toBe(true);
    for (let i = 0; i < 5 && s.busy(); i++) await new Promise((r) => setImmediate(r));
    expect(s.busy()).toBe(false);
    expect(s.size()).toBe(0);
  });
});
