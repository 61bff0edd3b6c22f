/**
 * Seconds from a duration as Vault's config and policy files write them:
 * a number of seconds (number or digit string), `"<n>d"` for days, or a Go
 * duration (`"768h"`, `"1h30m"`, `"1.5h"`, `"90s"`). Sub-second parts are
 * truncated; negative or malformed values throw a plain Error (callers turn
 * it into a 400 naming their field). Same reading as the SDK's field parser.
 */
const UNIT_SECONDS: Record<string, number> = { ns: 1e-9, us: 1e-6, 'µs': 1e-6, 'μs': 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };
const GO_DURATION = /^(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/;
const GO_DURATION_PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g;

export function parseDuration(v: unknown): number {
  if (typeof v === 'number') {
    if (!Number.isFinite(v) || v < 0) throw new Error('invalid duration');
    return Math.floor(v);
  }
  if (typeof v !== 'string') throw new Error('invalid duration');
  const s = v.trim();
  if (s === '') return 0;
  if (/^\d+$/.test(s)) return Number(s);
  const days = /^(\d+)d$/.exec(s);
  if (days) return Number(days[1]) * 86400;
  if (!GO_DURATION.test(s)) throw new Error('invalid duration');
  let nanos = 0;
  // Sum in nanoseconds so "1.5h" and "500ms" add up without float drift at whole seconds.
  for (const m of s.matchAll(GO_DURATION_PART)) nanos += Math.round(Number(m[1]) * (UNIT_SECONDS[m[2] as string] ?? 0) * 1e9);
  if (!Number.isSafeInteger(nanos)) throw new Error('invalid duration');
  return Math.floor(nanos / 1e9);
}
