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
 *
 * Each node also keeps one connection of its own open (its session) and the
 * holder records that session's backend pid and start time in the row. A
 * process that dies (SIGKILL, a crash) loses its connection, and PostgreSQL
 * ends the backend at once: the row then names a session that no longer
 * exists, and a standby takes the lock without waiting for it to expire. A
 * holder that is alive but stuck (paused, cut off) keeps its session, and the
 * lock is taken only once it expires, as before.
 */
import type { HaLock, LockHolder } from './backend.js';
import type { PgClient, PostgresPhysical } from './postgresql.js';
import { HA_LOCK_KEY } from './postgresql.js';

export function createPostgresLock(opts: { physical: PostgresPhysical; identity: string; value: string; ttlMs: number }): HaLock {
  const { physical, identity, value } = opts;
  const db = physical.lockDb();
  const t = physical.haTable;
  const ttl = `${Math.ceil(opts.ttlMs)} milliseconds`;
  const count = (r: unknown) => (r as { rowCount?: number }).rowCount ?? 0;
  /** This node's session: a connection kept open, its backend's pid and start as PostgreSQL lists them. */
  type Session = { client: PgClient; pid: number; start: string };
  let session: Session | null = null;
  let opening: Promise<Session | null> | null = null;
  const ensureSession = (): Promise<Session | null> => {
    if (session) return Promise.resolve(session);
    opening ??= (async (): Promise<Session | null> => {
      const c = physical.client();
      const lost = () => {
        if (session?.client === c) session = null;
        c.end().catch(() => undefined);
      };
      c.on('error', lost);
      c.on('end', lost);
      try {
        await c.connect();
        const r = await c.query(`SELECT pid, backend_start::text AS start FROM pg_stat_activity WHERE pid = pg_backend_pid()`);
        const row = r.rows[0] as { pid: number; start: string } | undefined;
        if (!row) throw new Error('own session not listed');
        session = { client: c, pid: row.pid, start: row.start };
        return session;
      } catch {
        lost();
        return null;
      }
    })().finally(() => (opening = null));
    return opening;
  };
  // The holder's session is gone: its process died, the lock is free now.
  const sessionGone = `(l.ha_pid IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = l.ha_pid AND a.backend_start = l.ha_backend_start))`;
  return {
    identity,
    fenceWrites: () => physical.fence(identity),
    async tryAcquire() {
      await physical.ready;
      // Without a session of its own a node can still take an expired lock; standbys then wait for the TTL.
      const s = await ensureSession();
      const r = await db.raw(
        `INSERT INTO ${t} AS l (ha_key, ha_identity, ha_value, valid_until, ha_pid, ha_backend_start) VALUES (?, ?, ?, now() + ?::interval, ?, ?::timestamptz)
         ON CONFLICT (ha_key) DO UPDATE SET ha_identity = EXCLUDED.ha_identity, ha_value = EXCLUDED.ha_value, valid_until = EXCLUDED.valid_until,
           ha_pid = EXCLUDED.ha_pid, ha_backend_start = EXCLUDED.ha_backend_start
         WHERE l.valid_until < now() OR l.ha_identity = EXCLUDED.ha_identity OR ${sessionGone}`,
        [HA_LOCK_KEY, identity, value, ttl, s?.pid ?? null, s?.start ?? null],
      );
      return count(r) === 1;
    },
    async renew() {
      // A session lost and opened again is recorded, so standbys do not take a live holder's lock.
      const s = await ensureSession();
      const r = await db.raw(
        `UPDATE ${t} SET valid_until = now() + ?::interval, ha_pid = COALESCE(?, ha_pid), ha_backend_start = COALESCE(?::timestamptz, ha_backend_start) WHERE ha_key = ? AND ha_identity = ?`,
        [ttl, s?.pid ?? null, s?.start ?? null, HA_LOCK_KEY, identity],
      );
      return count(r) === 1;
    },
    async release() {
      try {
        await db.raw(`DELETE FROM ${t} WHERE ha_key = ? AND ha_identity = ?`, [HA_LOCK_KEY, identity]);
      } finally {
        // Leaving the cluster (seal, shutdown): the session goes too; the next attempt opens another.
        const s = session;
        session = null;
        await s?.client.end().catch(() => undefined);
      }
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
