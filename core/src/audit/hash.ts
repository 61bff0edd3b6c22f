/**
 * Audit hashing: every string value of request and response data, and every
 * token and accessor, is written as `hmac-sha256:<hex>` keyed by the device's
 * own salt, so an operator can check a known value (sys/audit-hash) but the
 * log never holds a secret. Keys listed in a mount's audit_non_hmac_* config
 * are written in plain, as Vault does.
 */
import { createHmac } from 'node:crypto';

export function hmacValue(salt: Buffer, value: string): string {
  return `hmac-sha256:${createHmac('sha256', salt).update(value).digest('hex')}`;
}

/** Deep copy of `v` with every string leaf replaced by its HMAC (except top-level keys in `plainKeys`). */
export function hashStructure(salt: Buffer, v: unknown, plainKeys: ReadonlySet<string> = EMPTY, depth = 0): unknown {
  if (typeof v === 'string') return hmacValue(salt, v);
  if (Array.isArray(v)) return v.map((x) => hashStructure(salt, x, EMPTY, depth + 1));
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      out[k] = depth === 0 && plainKeys.has(k) ? x : hashStructure(salt, x, EMPTY, depth + 1);
    }
    return out;
  }
  return v; // numbers, booleans, null are not secret-bearing
}

const EMPTY: ReadonlySet<string> = new Set();
