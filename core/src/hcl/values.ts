/**
 * Schemas of the values a configuration file holds, wire-lenient like Vault's:
 * `tls_disable = "true"` or `1`, `max_parallel = "8"`, `default_lease_ttl =
 * "768h"` or a number of seconds. The config loader and each storage backend's
 * block schema (storage/registry.ts) build on these.
 */
import { parseDuration, parseDurationMs } from '@strongroom/sdk-plugin/host';
import { z } from 'zod';

const TRUE = new Set(['1', 't', 'true', 'yes', 'on']);
const FALSE = new Set(['0', 'f', 'false', 'no', 'off', '']);

export const lenientBool = z.preprocess((v) => {
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    if (TRUE.has(s)) return true;
    if (FALSE.has(s)) return false;
  }
  if (v === 1) return true;
  if (v === 0) return false;
  return v;
}, z.boolean({ message: 'must be a boolean' }));

export const lenientInt = z.preprocess(
  (v) => (typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : v),
  z.number({ message: 'must be an integer' }).int('must be an integer'),
);

const durationOf = (parse: (v: string | number) => number, examples: string) =>
  z.union([z.string(), z.number()]).transform((v, ctx) => {
    try {
      return parse(v);
    } catch {
      ctx.addIssue({ code: 'custom', message: `must be a duration such as ${examples}` });
      return z.NEVER;
    }
  });

/** Seconds. */
export const duration = durationOf(parseDuration, '"768h", "30m" or a number of seconds');

/** Milliseconds. */
export const durationMs = durationOf(parseDurationMs, '"10s" or "250ms"');

export const nonEmpty = z.string({ message: 'must be a string' }).trim().min(1, 'must not be empty');
