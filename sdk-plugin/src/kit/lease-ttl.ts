/**
 * Lease TTLs of an engine's credentials (database, LDAP and RabbitMQ leases):
 * what the engine configures (a role, a lease config), else the mount's, and
 * what a renewal grants. Seconds throughout; 0 means not set.
 *
 * `capTtl` and `secondsLeft` are the rule itself, pure: the core's expiration
 * manager applies the same two when it registers and renews a lease, so an
 * engine and the core never disagree on what a TTL becomes.
 */
import type { LogicalResponse, SecretRef } from '../logical.js';
import type { SystemView } from '../system-view.js';

export interface LeaseTtls {
  /** The TTL of a new lease (never above maxTtl when that is set). */
  ttl: number;
  /** The longest a lease lives from its issue time (0: no cap). */
  maxTtl: number;
}

/** A TTL capped by a max TTL (0: no cap). */
export function capTtl(ttl: number, maxTtl: number): number {
  return maxTtl > 0 ? Math.min(ttl, maxTtl) : ttl;
}

/** Whole seconds left of a max TTL counted from `issueTime` (ms), never negative. */
export function secondsLeft(issueTime: number, maxTtl: number, now: number): number {
  return Math.max(0, Math.floor((issueTime + maxTtl * 1000 - now) / 1000));
}

/** The configured TTLs, else the mount's (the core is asked only for what is not set, in parallel). */
export async function resolve(system: Pick<SystemView, 'defaultLeaseTtl' | 'maxLeaseTtl'>, ttl: number, maxTtl: number): Promise<LeaseTtls> {
  const [mountDefault, mountMax] = await Promise.all([ttl ? 0 : system.defaultLeaseTtl(), maxTtl ? 0 : system.maxLeaseTtl()]);
  const max = maxTtl || mountMax;
  const t = ttl || mountDefault;
  return { ttl: capTtl(t, max), maxTtl: max };
}

/** What a renewal grants: the increment asked (else the TTL), never past issue time + maxTtl. */
export function renewal(secret: Pick<SecretRef, 'increment' | 'issueTime'>, ttls: LeaseTtls, now: number): number {
  const wanted = secret.increment > 0 ? secret.increment : ttls.ttl;
  return ttls.maxTtl > 0 ? Math.min(wanted, secondsLeft(secret.issueTime, ttls.maxTtl, now)) : wanted;
}

/** A renew handler's answer: the lease renewed for `renewal(...)` seconds, its internal data kept. */
export function renewed(secret: SecretRef, ttls: LeaseTtls, now: number): LogicalResponse & { secret: NonNullable<LogicalResponse['secret']> } {
  return { data: {}, secret: { type: secret.secretType, ttl: renewal(secret, ttls, now), maxTtl: ttls.maxTtl, renewable: true, internalData: secret.internalData } };
}
