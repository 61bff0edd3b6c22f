import { EventEmitter } from 'node:events';
import { StrongroomError, badRequest } from '../errors.js';
import type { WireFrame } from './codec.js';
import { createMuxClient, serveFrames } from './mux.js';

/** Two in-memory stream ends wired to each other (frames as objects, like grpc-js after decoding). */
function pipePair() {
  const a = new EventEmitter() as EventEmitter & { write(f: WireFrame): void };
  const b = new EventEmitter() as EventEmitter & { write(f: WireFrame): void };
  const kindOf = (f: WireFrame) => Object.keys(f).find((k) => k !== 'id');
  a.write = (f) => setImmediate(() => b.emit('data', { ...f, kind: kindOf(f) }));
  b.write = (f) => setImmediate(() => a.emit('data', { ...f, kind: kindOf(f) }));
  return { a, b };
}

describe('stream multiplexer', () => {
  test('replies are matched to their calls by id, out of order', async () => {
    const { a, b } = pipePair();
    serveFrames(b, async (f) => {
      const n = (f.echo as { n: number }).n;
      await new Promise((r) => setTimeout(r, (10 - n) * 3));
      if (n === 5) throw badRequest('five is bad');
      return ['echo_reply', { n: n * 10 }];
    });
    const mux = createMuxClient({ sink: a, onTimeout: () => new Error('timeout') });
    a.on('data', (f: WireFrame) => mux.receive(f));
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, n) => mux.call('echo', { n }, 1000)));
    results.forEach((r, n) => {
      if (n === 5) expect(r.status === 'rejected' && (r.reason as StrongroomError).status).toBe(400);
      else expect(r.status === 'fulfilled' && (r.value.echo_reply as { n: number }).n).toBe(n * 10);
    });
    expect(mux.inFlight()).toBe(0);
  });

  test('the deadline sweep outlives an answered call until its next tick, then stops', async () => {
    const { a, b } = pipePair();
    serveFrames(b, async () => ['echo_reply', {}]);
    const mux = createMuxClient({ sink: a, onTimeout: () => new Error('timeout'), sweepMs: 20 });
    a.on('data', (f: WireFrame) => mux.receive(f));
    expect(mux.sweeping()).toBe(false);
    await mux.call('echo', {}, 1000);
    // Still running: the next call in a sequence reuses it.
    expect(mux.sweeping()).toBe(true);
    await mux.call('echo', {}, 1000);
    await new Promise((r) => setTimeout(r, 60));
    expect(mux.sweeping()).toBe(false);
  });

  test('the idle frame is written once when the sweep stops after calls, not per call', async () => {
    const { a, b } = pipePair();
    const seen: string[] = [];
    b.on('data', (f: WireFrame) => seen.push(String(f.kind)));
    serveFrames(b, async () => ['echo_reply', {}]);
    const mux = createMuxClient({ sink: a, onTimeout: () => new Error('timeout'), sweepMs: 20, idleFrame: { id: 0, cancel: {} } });
    a.on('data', (f: WireFrame) => mux.receive(f));
    await mux.call('echo', {}, 1000);
    await mux.call('echo', {}, 1000);
    await new Promise((r) => setTimeout(r, 60));
    expect(mux.sweeping()).toBe(false);
    expect(seen).toEqual(['echo', 'echo', 'cancel']);
  });

  test('a call past its deadline is rejected and the peer is told to cancel; failAll rejects the rest', async () => {
    const { a, b } = pipePair();
    const seen: string[] = [];
    b.on('data', (f: WireFrame) => seen.push(String(f.kind)));
    const mux = createMuxClient({ sink: a, onTimeout: (kind, ms) => new StrongroomError('coded', `${kind} ${ms}`, { status: 504 }), sweepMs: 5 });
    await expect(mux.call('slow', {}, 30)).rejects.toMatchObject({ status: 504, message: 'slow 30' });
    await new Promise((r) => setImmediate(r));
    expect(seen).toEqual(['slow', 'cancel']);
    const pending = mux.call('slow', {}, 60_000);
    mux.failAll(new StrongroomError('plugin_failed', 'gone'));
    await expect(pending).rejects.toMatchObject({ status: 502 });
    expect(mux.inFlight()).toBe(0);
  });
});
