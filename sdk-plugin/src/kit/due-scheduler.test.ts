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
});
