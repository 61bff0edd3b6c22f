/**
 * Minimal wire-lenient zod helpers for the token endpoints: CLIs send every
 * value as a string ("1h" or "3600" for a duration, "true" for a bool, "a,b"
 * for a list). Local stand-ins until sdk-plugin/src/fields.ts ships `f.*`.
 */
import { z } from 'zod';
import { badRequest } from '@strongroom/sdk-plugin';

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };
const DURATION_PART = /(\d+)(s|m|h|d)/gy;

/** Seconds from 3600, "3600", "1h", "1h30m", "90s", "2d". Returns NaN when unparseable or negative. */
export function parseDurationSeconds(v: unknown): number {
  if (typeof v === 'number') return Number.isInteger(v) && v >= 0 ? v : NaN;
  if (typeof v !== 'string') return NaN;
  const s = v.trim();
  if (s === '') return 0;
  if (/^\d+$/.test(s)) return Number(s);
  DURATION_PART.lastIndex = 0;
  let total = 0;
  let consumed = 0;
  for (let m = DURATION_PART.exec(s); m !== null; m = DURATION_PART.exec(s)) {
    total += Number(m[1]) * (UNIT_SECONDS[m[2] ?? 's'] ?? NaN);
    consumed = DURATION_PART.lastIndex;
  }
  return consumed === s.length ? total : NaN;
}

const TRUE = new Set(['1', 't', 'true']);
const FALSE = new Set(['0', 'f', 'false']);

export const lenient = {
  duration: () =>
    z.preprocess((v) => parseDurationSeconds(v), z.number({ error: 'must be a duration such as 3600 or "1h"' }).int().nonnegative()),
  bool: () =>
    z.preprocess((v) => {
      if (typeof v === 'string') {
        const s = v.trim().toLowerCase();
        if (TRUE.has(s)) return true;
        if (FALSE.has(s)) return false;
      }
      if (v === 1 || v === 0) return v === 1;
      return v;
    }, z.boolean({ error: 'must be a boolean' })),
  int: () =>
    z.preprocess(
      (v) => (typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v.trim()) : v),
      z.number({ error: 'must be an integer' }).int(),
    ),
  commaList: () =>
    z.preprocess(
      (v) => {
        const items = typeof v === 'string' ? v.split(',') : v;
        return Array.isArray(items)
          ? items.map((x) => (typeof x === 'string' ? x.trim() : x)).filter((x) => x !== '')
          : items;
      },
      z.array(z.string(), { error: 'must be a list or a comma-separated string' }),
    ),
  /** A map of strings; a JSON string holding one is accepted too (CLI `-metadata` style). */
  stringMap: () =>
    z.preprocess((v) => {
      if (typeof v === 'string' && v.trim().startsWith('{')) {
        try {
          return JSON.parse(v) as unknown;
        } catch {
          return v;
        }
      }
      return v === null ? {} : v;
    }, z.record(z.string(), z.string(), { error: 'must be a map of strings' })),
};

/** Parses with a schema, or throws a 400 whose messages name each bad field. */
export function parseOrBadRequest<T extends z.ZodType>(schema: T, data: unknown): z.output<T> {
  const r = schema.safeParse(data ?? {});
  if (r.success) return r.data;
  const details = r.error.issues.map((i) => `${i.path.length ? i.path.join('.') : 'request'}: ${i.message}`);
  throw badRequest(details[0] ?? 'invalid request', details);
}
