/**
 * TTL arithmetic shared by token creation and renewal. Mirrors the documented
 * behaviour of Vault's framework.CalculateTTL: a periodic token gets `period`
 * (capped by the effective max) and is bounded only by explicit max TTL; any
 * other token gets increment, else its own TTL, else the system default, and
 * can never outlive issue time + effective max TTL.
 */
import { badRequest } from '@strongroom/sdk-plugin/host';

export interface TtlInput {
  /** Seconds requested on renewal (0: none). */
  increment: number;
  /** The token's own TTL in seconds (0: none). */
  ttl: number;
  period: number;
  /** Backend (role, mount) max in seconds (0: system max only). */
  maxTtl: number;
  explicitMaxTtl: number;
  /** Unix milliseconds the max TTL counts from (creation time). */
  startTime: number;
  now: number;
  systemDefaultTtl: number;
  systemMaxTtl: number;
}

export function calculateTtl(i: TtlInput): { ttl: number; warnings: string[] } {
  const warnings: string[] = [];
  let maxTtl = i.systemMaxTtl;
  if (i.maxTtl > 0 && i.maxTtl < maxTtl) maxTtl = i.maxTtl;
  if (i.explicitMaxTtl > 0 && i.explicitMaxTtl < maxTtl) maxTtl = i.explicitMaxTtl;
  if (maxTtl <= 0) throw badRequest('max TTL must be greater than zero');

  let ttl: number;
  let maxValidTime = 0;
  if (i.period > 0) {
    let period = i.period;
    if (period > maxTtl) {
      warnings.push(`period of ${period}s exceeded the effective max_ttl of ${maxTtl}s; period value is capped accordingly`);
      period = maxTtl;
    }
    ttl = period;
    if (i.explicitMaxTtl > 0) maxValidTime = i.startTime + i.explicitMaxTtl * 1000;
  } else {
    ttl = i.increment > 0 ? i.increment : i.ttl > 0 ? i.ttl : i.systemDefaultTtl;
    maxValidTime = i.startTime + maxTtl * 1000;
  }
  if (maxValidTime > 0) {
    const maxValidTtl = Math.floor((maxValidTime - i.now) / 1000);
    if (maxValidTtl <= 0) throw badRequest('past the max TTL, cannot renew');
    if (ttl > maxValidTtl) {
      warnings.push(`TTL of ${ttl}s exceeded the effective max_ttl of ${maxValidTtl}s; TTL value is capped accordingly`);
      ttl = maxValidTtl;
    }
  }
  return { ttl, warnings };
}
