/**
 * Audit hashing: every string value of request and response data, and every
 * token and accessor, is written as `hmac-sha256:<hex>` keyed by the device's
 * own salt, so an operator can check a known value (sys/audit-hash) but the
 * log never holds a secret. Keys listed in a mount's audit_non_hmac_* config
 * are written in plain, as Vault does, except a field the engine declares
 * sensitive (`f.sensitive`): that one is always HMAC'd.
 */
import { createHmac } from 'node:crypto';
import type { BackendDescription } from '@strongroom/sdk-plugin/host';

const sensitiveFields = new WeakMap<BackendDescription, ReadonlySet<string>>();

/**
 * The request keys of a mount written in plain: its audit_non_hmac_request_keys
 * without any field a path of the engine declares sensitive (by name, on any
 * path of the mount: the safe side when two paths share a name).
 */
export function plainRequestKeys(configured: readonly string[], description: BackendDescription | undefined): string[] {
  if (configured.length === 0 || !description) return [...configured];
  let sensitive = sensitiveFields.get(description);
  if (!sensitive) {
    sensitive = new Set(description.paths.flatMap((p) => p.fields.filter((fd) => fd.sensitive).map((fd) => fd.name)));
    sensitiveFields.set(description, sensitive);
  }
  const s = sensitive;
  return configured.filter((k) => !s.has(k));
}

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
