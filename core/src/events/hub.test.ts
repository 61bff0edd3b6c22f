import { createEventHub, eventTypeMatcher, type EventSink, type Frame } from './hub';

/** A sink that takes `capacity` frames before it reports full, until drain() is called. */
function fakeSink(capacity = Infinity) {
  const frames: Frame[] = [];
  let drains: Array<() => void> = [];
  let ended: string | null = null;
  let room = capacity;
  const sink: EventSink = {
    send: (f) => (frames.push(f), --room > 0),
    onDrain: (cb) => void drains.push(cb),
    end: (reason) => void (ended = reason),
    onClose: () => undefined,
  };
  return {
    sink,
    frames,
    ended: () => ended,
    drain(n = Infinity) {
      room = n;
      const d = drains;
      drains = [];
      for (const cb of d) cb();
    },
  };
}

const tick = () => new Promise((r) => setImmediate(r));
const input = (i: number, type = 'kv-v2/data-write') => ({ type, namespaceId: 'root', namespacePath: '', mount: 'secret/', path: `secret/data/${i}` });
const everything = { eventType: '*', namespaces: () => true, verdict: async () => 'deliver' as const, tokenKey: 'k1' };

describe('event hub', () => {
  it('globs event types with * only', () => {
    expect(eventTypeMatcher('kv-v2/data-*')('kv-v2/data-write')).toBe(true);
    expect(eventTypeMatcher('kv-v2/data-*')('kv-v2/metadata-write')).toBe(false);
    expect(eventTypeMatcher('*')('lease/expire')).toBe(true);
    expect(eventTypeMatcher('kv-v2.data')('kv-v2xdata')).toBe(false);
  });

  it('a full subscriber loses events into one dropped notice, with its queue bounded; others get everything', async () => {
    const hub = createEventHub({ logMaxEvents: 100, logMaxAgeMs: 60_000, subscriberBuffer: 4 });
    const slow = fakeSink(1);
    const fast = fakeSink();
    hub.subscribe(everything, slow.sink);
    hub.subscribe({ ...everything, tokenKey: 'k2' }, fast.sink);
    // Each publish comes from its own request (an I/O callback): the reading subscriber keeps up.
    for (let i = 1; i <= 20; i++) {
      hub.publish(input(i));
      await tick();
    }
    expect(fast.frames).toHaveLength(20);
    expect(hub.stats()).toMatchObject({ published: 20, maxQueued: 4 });
    slow.drain();
    await tick();
    const notices = slow.frames.filter((f) => f.name === 'dropped');
    expect(notices).toHaveLength(1);
    const n = JSON.parse(notices[0]!.data);
    expect(n.count + slow.frames.filter((f) => !f.name).length).toBe(20);
    expect(hub.stats().dropped).toBe(n.count);
  });

  it('asks the verdict at delivery: skips what the token may not see, ends the stream when the token is gone', async () => {
    const hub = createEventHub({ logMaxEvents: 100, logMaxAgeMs: 60_000, subscriberBuffer: 10 });
    let alive = true;
    const s = fakeSink();
    hub.subscribe({ ...everything, verdict: async (e) => (!alive ? 'end' : e.event.path.endsWith('2') ? 'skip' : 'deliver') }, s.sink);
    hub.publish(input(1));
    hub.publish(input(2));
    hub.publish(input(3));
    await tick();
    expect(s.frames.map((f) => JSON.parse(f.data).path)).toEqual(['secret/data/1', 'secret/data/3']);
    alive = false;
    hub.publish(input(4));
    await tick();
    expect(s.ended()).toMatch(/token/);
    expect(hub.stats().subscribers).toBe(0);
  });

  it('replays after Last-Event-ID, and answers a gap when the log no longer has what followed', async () => {
    let now = 1_000_000;
    const hub = createEventHub({ logMaxEvents: 5, logMaxAgeMs: 60_000, subscriberBuffer: 100, now: () => now });
    const first = fakeSink();
    hub.subscribe(everything, first.sink);
    for (let i = 1; i <= 3; i++) hub.publish(input(i));
    await tick();
    const ids = first.frames.map((f) => f.id!);
    const again = fakeSink();
    hub.subscribe({ ...everything, lastEventId: ids[0] }, again.sink);
    await tick();
    expect(again.frames.map((f) => f.id)).toEqual(ids.slice(1));
    // Six more: the log (5) no longer holds the event after ids[2].
    for (let i = 4; i <= 9; i++) hub.publish(input(i));
    const late = fakeSink();
    hub.subscribe({ ...everything, lastEventId: ids[2] }, late.sink);
    await tick();
    expect(late.frames[0]).toMatchObject({ name: 'gap' });
    expect(late.frames.slice(1).map((f) => JSON.parse(f.data).path)).toEqual([5, 6, 7, 8, 9].map((i) => `secret/data/${i}`));
    // Older than the age limit: gone from the log too.
    now += 61_000;
    hub.publish(input(10));
    const aged = fakeSink();
    hub.subscribe({ ...everything, lastEventId: ids[2] }, aged.sink);
    await tick();
    expect(aged.frames.map((f) => f.name ?? JSON.parse(f.data).path)).toEqual(['gap', 'secret/data/10']);
  });

  it('ends the streams of a revoked token', () => {
    const hub = createEventHub({ logMaxEvents: 5, logMaxAgeMs: 60_000, subscriberBuffer: 100 });
    const a = fakeSink();
    const b = fakeSink();
    hub.subscribe(everything, a.sink);
    hub.subscribe({ ...everything, tokenKey: 'other' }, b.sink);
    hub.endToken('k1');
    expect(a.ended()).toMatch(/revoked/);
    expect(b.ended()).toBeNull();
  });
});
