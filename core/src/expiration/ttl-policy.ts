/**
 * What TTL a lease gets, as pure functions (seconds; times in ms): at issue, the engine's TTL,
 * else the mount's default, else the max; capped by the engine's max TTL, the mount's and the
 * system's. At renewal, what the engine grants, else the increment, else the mount default;
 * never past issue time + the max TTL, which follows a mount tuned down since issue. The cap
 * and the "left of the max" rule are the SDK kit's (`leaseTtl`), so engines that compute their
 * own lease TTLs apply the same rule.
 */
import { leaseTtl } from '@strongroom/sdk-plugin/host';

export interface MountLimits {
  /** The mount's default and max lease TTL (0: not set). */
  defaultTtl: number;
  maxTtl: number;
  /** Used when the mount reports no max TTL (Vault's 32 days). */
  fallbackMaxTtl: number;
}

export interface IssuedTtl {
  ttl: number;
  maxTtl: number;
  warnings: string[];
}

/** A new lease's TTL and max TTL from what the engine asked (0: not set). */
export function issueTtl(asked: { ttl: number; maxTtl: number }, mount: MountLimits): IssuedTtl {
  const systemMax = mount.maxTtl > 0 ? mount.maxTtl : mount.fallbackMaxTtl;
  const maxTtl = Math.floor(asked.maxTtl > 0 ? Math.min(asked.maxTtl, systemMax) : systemMax);
  const wanted = Math.floor(asked.ttl > 0 ? asked.ttl : mount.defaultTtl > 0 ? mount.defaultTtl : systemMax);
  const ttl = leaseTtl.capTtl(wanted, maxTtl);
  const warnings = wanted > ttl ? [`TTL of ${wanted}s exceeded the effective max_ttl of ${maxTtl}s; the TTL is capped to it`] : [];
  return { ttl, maxTtl, warnings };
}

/** A renewal's TTL: `granted` is the engine's answer (0: not set), `increment` the caller's. */
export function renewTtl(
  lease: { issueTime: number; maxTtl: number },
  granted: number,
  increment: number,
  mount: MountLimits,
  now: number,
): { ttl: number; warnings: string[] } {
  const limit = Math.min(lease.maxTtl, mount.maxTtl > 0 ? mount.maxTtl : mount.fallbackMaxTtl);
  const remaining = leaseTtl.secondsLeft(lease.issueTime, limit, now);
  const wanted = Math.floor(granted > 0 ? granted : increment > 0 ? increment : mount.defaultTtl > 0 ? mount.defaultTtl : limit);
  if (wanted <= remaining) return { ttl: wanted, warnings: [] };
  return { ttl: remaining, warnings: [`TTL of ${wanted}s exceeded the effective max_ttl of ${limit}s from issue; the TTL is capped to ${remaining}s`] };
}
