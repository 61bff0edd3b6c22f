/**
 * The cluster's change feed on PostgreSQL, as a standby reads it: every
 * fenced write of the active node took the next change number, logged the
 * keys it changed under it and announced the number with NOTIFY in its own
 * transaction (postgresql.ts). A listener holds one connection of its own
 * with LISTEN on the cluster's channel; an announcement, a reconnect, or a
 * slow poll all lead to the same read, "every change after the last number
 * I applied", so a missed notification only delays what the next read finds.
 * Numbers commit in order (the sequence row is locked until commit), so
 * reading after N never skips a change that commits later with a smaller one.
 */
import type { ChangeFeed } from './backend.js';
import type { PgClient, PostgresPhysical } from './postgresql.js';

const RECONNECT_MS = 500;
/** A read now and then even without announcements: a notification lost with its connection is found here too. */
const POLL_MS = 2_000;
const PAGE = 10_000;

export function createPostgresChangeFeed(physical: PostgresPhysical, logger: { warn(msg: string, meta?: Record<string, unknown>): void }): ChangeFeed {
  const { seqTable, logTable, channel } = physical.changeLog;
  const db = physical.db;
  const head = async (): Promise<number> => {
    const r = (await db.raw(`SELECT seq::text AS seq FROM ${seqTable} WHERE id = 1`)) as { rows: Array<{ seq: string }> };
    return Number(r.rows[0]?.seq ?? 0);
  };
  return {
    head: async () => {
      await physical.ready;
      return head();
    },
    lastWritten: () => physical.lastWrittenSeq(),
    async since(after) {
      await physical.ready;
      // The newest number and the oldest logged in one round trip (the delay to a standby is counted in them).
      const ends = (await db.raw(`SELECT (SELECT seq FROM ${seqTable} WHERE id = 1)::text AS head, (SELECT min(seq) FROM ${logTable})::text AS oldest`)) as {
        rows: Array<{ head: string | null; oldest: string | null }>;
      };
      const top = Number(ends.rows[0]?.head ?? 0);
      const oldest = ends.rows[0]?.oldest == null ? null : Number(ends.rows[0].oldest);
      // The log no longer reaches back to `after`: what changed in between is unknown.
      if (top > after && (oldest === null || oldest > after + 1)) return { head: top, keys: [], complete: false };
      const keys = new Set<string>();
      // Keyset pages over (seq, path): one batch may have logged more keys than a page holds.
      let cursor: [number, string] | null = null;
      for (;;) {
        const where: string = cursor ? '(seq, path) > (?, ?)' : 'seq > ?';
        const r = (await db.raw(`SELECT seq::text AS seq, path FROM ${logTable} WHERE ${where} AND seq <= ? ORDER BY seq, path LIMIT ${PAGE}`, [...(cursor ?? [after]), top])) as {
          rows: Array<{ seq: string; path: string }>;
        };
        for (const row of r.rows) keys.add(row.path);
        if (r.rows.length < PAGE) break;
        const last = r.rows[r.rows.length - 1]!;
        cursor = [Number(last.seq), last.path];
      }
      return { head: top, keys: [...keys], complete: true };
    },
    subscribe(onAnnounce) {
      let closed = false;
      let client: PgClient | null = null;
      let retry: NodeJS.Timeout | null = null;
      const poll = setInterval(onAnnounce, POLL_MS);
      poll.unref();
      const connect = async (): Promise<void> => {
        if (closed) return;
        const c = physical.client();
        let failed = false;
        const again = (err?: unknown) => {
          if (failed) return;
          failed = true;
          client = null;
          c.end().catch(() => undefined);
          if (closed) return;
          if (err) logger.warn('ha: the change feed connection failed; reconnecting', { error: physical.scrub(err instanceof Error ? err.message : String(err)) });
          retry = setTimeout(() => void connect(), RECONNECT_MS);
          retry.unref();
        };
        c.on('error', again);
        c.on('end', () => again());
        c.on('notification', (n) => {
          if (n.channel === channel) onAnnounce();
        });
        try {
          await c.connect();
          await c.query(`LISTEN "${channel}"`);
          client = c;
          // Whatever was announced while not listening: read it now.
          onAnnounce();
        } catch (err) {
          again(err);
        }
      };
      void connect();
      return {
        async close() {
          closed = true;
          clearInterval(poll);
          if (retry) clearTimeout(retry);
          await client?.end().catch(() => undefined);
        },
      };
    },
  };
}
