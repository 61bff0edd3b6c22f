/** The buckets on a fake clock: a window refills whole when it ends; a block outlasts windows; clients apart. */
import { createRateLimiter } from './rate-limiter.js';
import type { RateLimitRule } from './rules.js';

const rule = (rate: number, interval: number, blockInterval = 0): RateLimitRule => ({
  type: 'rate-limit',
  name: 'r',
  path: '',
  role: '',
  ownerNamespaceId: 'root',
  target: { namespaceId: 'root', mountPath: '', suffix: '', glob: false, role: '' },
  rate,
  interval,
  blockInterval,
});

describe('rate limiter', () => {
  let now = 1_000_000;
  const limiter = createRateLimiter(() => now);
  afterAll(() => limiter.stop());

  it('allows `rate` requests a window, then refuses until the window ends, and counts clients apart', () => {
    const r = rule(3, 10);
    const take = (client = 'a') => limiter.take(r, 'k1', client);
    expect([take(), take(), take()].map((d) => [d.allowed, d.remaining])).toEqual([[true, 2], [true, 1], [true, 0]]);
    now += 4_000;
    expect(take()).toEqual({ allowed: false, limit: 3, remaining: 0, resetSeconds: 6 });
    expect(take('b').allowed).toBe(true);
    now += 6_000;
    expect(take()).toMatchObject({ allowed: true, remaining: 2, resetSeconds: 10 });
  });

  it('blocks a client that goes past the rate for block_interval, across windows', () => {
    const r = rule(1, 1, 60);
    const take = () => limiter.take(r, 'k2', 'a');
    expect(take().allowed).toBe(true);
    expect(take()).toMatchObject({ allowed: false, resetSeconds: 60 });
    now += 30_000;
    expect(take()).toMatchObject({ allowed: false, resetSeconds: 30 });
    now += 30_000;
    expect(take().allowed).toBe(true);
  });

  it('starts afresh when its rule is written again', () => {
    const r = rule(1, 3600);
    expect(limiter.take(r, 'k3', 'a').allowed).toBe(true);
    expect(limiter.take(r, 'k3', 'a').allowed).toBe(false);
    limiter.forget('k3');
    expect(limiter.take(r, 'k3', 'a').allowed).toBe(true);
  });
});
