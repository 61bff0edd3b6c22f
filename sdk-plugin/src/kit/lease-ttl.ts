/**
 * Lease TTLs of an engine's credentials (database, LDAP and RabbitMQ leases):
 * what the engine configures (a role, a lease config), else the mount's, and
 * what a renewal grants. Seconds throughout; 0 means not set.
 */
import type { LogicalResponse, SecretRef } from '../logical.js';
import type { SystemView } from '../system-view.js';

export interface LeaseTtls {
  /** The TTL of a new lease (never above maxTtl when that is set). */
  ttl: number;
  /** The longest a lease lives from its issue time (0: no cap). */
  maxTtl: number;
}

/** The configured TTLs, else the mount's (the core is asked only for what is not set, in parallel). */
export async function resolve(system: Pick<SystemView, 'defaultLeaseTtl' | 'maxLeaseTtl'>, ttl: number, maxTtl: number): Promise<LeaseTtls> {
  const [mountDefault, mountMax] = await Promise.all([ttl ? 0 : system.defaultLeaseTtl(), maxTtl ? 0 : system.maxLeaseTtl()]);
  const max = maxTtl || mountMax;
  const t = ttl || mountDefault;
  return { ttl: max > 0 ? Math.min(t, max) : t, maxTtl: max };
}

/** What a renewal grants: the increment asked (else the TTL), never past issue time + maxTtl. */
export function renewal(secret: Pick<SecretRef, 'increment' | 'issueTime'>, ttls: LeaseTtls, now: number): number {
  const wanted = secret.increment > 0 ? secret.increment : ttls.ttl;
  if (ttls.maxTtl <= 0) return wanted;
  return Math.min(wanted, Math.max(0, Math.floor((secret.issueTime + ttls.maxTtl * 1000 - now) / 1000)));
}

/** A renew handler's answer: the lease renewed for `renewal(...)` seconds, its internal data kept. */
export function renewed(secret: SecretRef, ttls: LeaseTtls, now: number): LogicalResponse & { secret: NonNullable<LogicalResponse['secret']> } {
  return { data: {}, secret: { type: secret.secretType, ttl: renewal(secret, ttls, now), maxTtl: ttls.maxTtl, renewable: true, internalData: secret.internalData } };
}
