/**
 * The HA lock: one row (`core/lock`) in the HA table, held by one node at a
 * time. Every time comparison uses the DATABASE's clock (`now()`), never a
 * node's, so nodes with skewed clocks still agree on who holds it:
 * - acquire inserts the row, or takes it over only when it has expired (or
 *   is already ours);
 * - renew pushes `valid_until` forward only while the row is ours;
 * - release deletes it only while it is ours.
 * Writes are fenced on the same row (postgresql.ts), so a node that lost it
 * cannot write even if it has not noticed yet.
 */
import type { HaLock, LockHolder } from './backend.js';
import type { PostgresPhysical } from './postgresql.js';
import { HA_LOCK_KEY } from './postgresql.js';

export function createPostgresLock(opts: { physical: PostgresPhysical; identity: string; value: string; ttlMs: number }): HaLock {
  const { physical, identity, value } = opts;
  const db = physical.lockDb();
  const t = physical.haTable;
  const ttl = `${Math.ceil(opts.ttlMs)} milliseconds`;
  const count = (r: unknown) => (r as { rowCount?: number }).rowCount ?? 0;
  return {
    identity,
    fenceWrites: () => physical.fence(identity),
    async tryAcquire() {
      await physical.ready;
      const r = await db.raw(
        `INSERT INTO ${t} AS l (ha_key, ha_identity, ha_value, valid_until) VALUES (?, ?, ?, now() + ?::interval)
         ON CONFLICT (ha_key) DO UPDATE SET ha_identity = EXCLUDED.ha_identity, ha_value = EXCLUDED.ha_value, valid_until = EXCLUDED.valid_until
         WHERE l.valid_until < now() OR l.ha_identity = EXCLUDED.ha_identity`,
        [HA_LOCK_KEY, identity, value, ttl],
      );
      return count(r) === 1;
    },
    async renew() {
      const r = await db.raw(`UPDATE ${t} SET valid_until = now() + ?::interval WHERE ha_key = ? AND ha_identity = ?`, [ttl, HA_LOCK_KEY, identity]);
      return count(r) === 1;
    },
    async release() {
      await db.raw(`DELETE FROM ${t} WHERE ha_key = ? AND ha_identity = ?`, [HA_LOCK_KEY, identity]);
    },
    async holder() {
      await physical.ready;
      const r = (await db.raw(
        `SELECT ha_identity, ha_value, ceil(extract(epoch FROM valid_until - now()) * 1000)::int AS remaining_ms FROM ${t} WHERE ha_key = ? AND valid_until > now()`,
        [HA_LOCK_KEY],
      )) as {
        rows: Array<{ ha_identity: string; ha_value: string; remaining_ms: number }>;
      };
      const row = r.rows[0];
      return row ? { identity: row.ha_identity, value: row.ha_value, remainingMs: row.remaining_ms } : null;
    },
  };
}
