/**
 * The rate-limit quotas' buckets: one per (rule, client address), on this node only (Vault's rule:
 * rate limits are not replicated). A bucket holds `rate` requests per `interval` window, the window
 * starting at the client's first request and refilled whole when it ends (as Vault's limiter);
 * with `block_interval`, a client that goes past its rate is refused for that long. Buckets of
 * windows that ended are dropped by a sweep, so idle clients cost nothing.
 */
import type { RateLimitRule } from './rules.js';

export interface RateDecision {
  allowed: boolean;
  /** Requests a window allows (the rate, whole). */
  limit: number;
  remaining: number;
  /** Seconds until the window refills (or the block ends), at least 1. */
  resetSeconds: number;
}

interface Bucket {
  windowEnd: number;
  remaining: number;
  blockedUntil: number;
}

const SWEEP_MS = 60_000;

export interface RateLimiter {
  take(rule: RateLimitRule, ruleKey: string, client: string): RateDecision;
  /** Drops the buckets of a rule (written again or deleted). */
  forget(ruleKey: string): void;
  stop(): void;
}

export function createRateLimiter(now: () => number = Date.now): RateLimiter {
  const buckets = new Map<string, Map<string, Bucket>>();
  const sweep = setInterval(() => {
    const t = now();
    for (const [key, clients] of buckets) {
      for (const [c, b] of clients) if (b.windowEnd <= t && b.blockedUntil <= t) clients.delete(c);
      if (clients.size === 0) buckets.delete(key);
    }
  }, SWEEP_MS);
  sweep.unref();

  return {
    take(rule, ruleKey, client) {
      const t = now();
      const limit = Math.max(1, Math.round(rule.rate));
      const intervalMs = rule.interval * 1000;
      let clients = buckets.get(ruleKey);
      if (!clients) buckets.set(ruleKey, (clients = new Map()));
      let b = clients.get(client);
      if (!b || (b.windowEnd <= t && b.blockedUntil <= t)) {
        b = { windowEnd: t + intervalMs, remaining: limit, blockedUntil: 0 };
        clients.set(client, b);
      } else if (b.windowEnd <= t) {
        b.windowEnd = t + intervalMs;
        b.remaining = limit;
      }
      const secondsUntil = (at: number) => Math.max(1, Math.ceil((at - t) / 1000));
      if (b.blockedUntil > t) return { allowed: false, limit, remaining: 0, resetSeconds: secondsUntil(b.blockedUntil) };
      if (b.remaining > 0) {
        b.remaining--;
        return { allowed: true, limit, remaining: b.remaining, resetSeconds: secondsUntil(b.windowEnd) };
      }
      if (rule.blockInterval > 0) {
        b.blockedUntil = t + rule.blockInterval * 1000;
        return { allowed: false, limit, remaining: 0, resetSeconds: secondsUntil(b.blockedUntil) };
      }
      return { allowed: false, limit, remaining: 0, resetSeconds: secondsUntil(b.windowEnd) };
    },
    forget(ruleKey) {
      buckets.delete(ruleKey);
    },
    stop() {
      clearInterval(sweep);
      buckets.clear();
    },
  };
}
