/**
 * PostgreSQL Physical (knex + pg), shared by every node of an HA cluster.
 *
 * What must stay true:
 * - Only what the barrier hands down is stored: values are ciphertext, keys
 *   are paths. The connection URL (it holds a password) never reaches a log
 *   or an error message: errors are scrubbed of it.
 * - Keys are ordered by code point everywhere (the columns use the "C"
 *   collation, byte order of UTF-8 = code-point order), as level does.
 * - With HA on, once `fence()` is armed every write runs only while this
 *   node still holds the lock row, checked by the database's own clock in
 *   the same statement (single writes) or the same transaction (batches),
 *   and the lock row is share-locked until the write commits: a node that
 *   lost the lock can never write after another one took it.
 * - With HA on, every fenced write also takes the next number of the
 *   cluster's change sequence (one row, row-locked until commit, so numbers
 *   commit in order), records the keys it changed under that number in the
 *   change log, and announces the number with NOTIFY on the cluster's channel,
 *   all in its own transaction: a standby that reads the log after a number
 *   has seen every change up to it (storage/postgres-changes.ts).
 * - A database that cannot be reached at start is retried in the background
 *   (the server keeps running and says why in the log and in 503 replies).
 */
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { Knex } from 'knex';
import { StrongroomError, badRequest } from '@strongroom/sdk-plugin/host';
import type { Physical, PhysicalEntry, PhysicalOp, ScanRange } from './physical.js';
import { assertValidKey, compareKeys, prefixUpperBound, scanWindow } from './keys.js';
import { readSnapshotFile } from './snapshot-format.js';

const DEFAULT_TABLE = 'strongroom_kv_store';
const DEFAULT_HA_TABLE = 'strongroom_ha_locks';
const DEFAULT_MAX_PARALLEL = 16;
/** The one lock row every node of a cluster competes for. */
export const HA_LOCK_KEY = 'core/lock';

// How many rows a scan reads per query (keyset pagination).
const SCAN_CHUNK = 256;
/** The most keys one ranged scan reads in one query (a page of a recursive listing). */
const MAX_SCAN_PAGE = 1000;
const CONNECT_TIMEOUT_MS = 5_000;
const ACQUIRE_TIMEOUT_MS = 10_000;
const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 5_000;

export interface PostgresStorageOptions {
  connectionUrl: string;
  table?: string;
  haTable?: string;
  /** Connection pool size. */
  maxParallel?: number;
  logger?: { warn(msg: string, meta?: Record<string, unknown>): void; info(msg: string, meta?: Record<string, unknown>): void };
  /** HA on: the change sequence and log tables exist, and fenced writes record and announce their changes. */
  ha?: boolean;
}

/** Change log entries kept behind the newest: a standby further behind than this rebuilds its state. */
const LOG_KEEP = 100_000;
/** Prune the log every this many fenced writes. */
const PRUNE_EVERY = 2_000;

/** The part of pg's Client used for a connection of its own (a LISTEN, the HA lock's session); pg ships no types. */
export interface PgClient {
  connect(): Promise<void>;
  query(sql: string, params?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
  end(): Promise<void>;
  on(event: 'error', fn: (err: Error) => void): void;
  on(event: 'end', fn: () => void): void;
  on(event: 'notification', fn: (n: { channel: string; payload?: string }) => void): void;
}

/** Thrown when a fenced write finds that this node no longer holds the HA lock. */
export class FencedWriteError extends StrongroomError {
  constructor() {
    super('unavailable', 'this node is no longer the active node: the write was refused');
  }
}

export interface PostgresPhysical extends Physical {
  /** Resolves once the tables exist (after any number of retries); rejects only when closed first. */
  readonly ready: Promise<void>;
  /** From now on, every write requires holding the lock row as `identity`. */
  fence(identity: string): void;
  /** The data connections (tests use them to look at the tables). */
  readonly db: Knex;
  /** The HA lock's own small pool, opened on first use. */
  lockDb(): Knex;
  readonly haTable: string;
  /** Removes the connection URL (and its password) from a message. */
  scrub(message: string): string;
  /** The change sequence's tables and NOTIFY channel (HA only). */
  readonly changeLog: { seqTable: string; logTable: string; channel: string };
  /** A new connection outside the pools (not yet connected), for a session that must last. */
  client(): PgClient;
  /** The sequence number of this node's last committed write (0 before any). */
  lastWrittenSeq(): number;
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** A table name as configured: a plain identifier, or schema.identifier. Quoted for SQL. */
function quoteTable(name: string, field: string): string {
  const parts = name.split('.');
  if (parts.length > 2 || !parts.every((p) => IDENT.test(p))) {
    throw badRequest(`${field}: must be a plain SQL identifier (letters, digits, _), optionally schema-qualified`);
  }
  return parts.map((p) => `"${p}"`).join('.');
}

/** The folder a key lists under: 'a/b/c' -> 'a/b/', 'a' -> ''. */
function parentOf(key: string): string {
  const i = key.lastIndexOf('/');
  return i === -1 ? '' : key.slice(0, i + 1);
}

function checkKey(key: string): void {
  assertValidKey(key);
  // PostgreSQL text cannot hold NUL.
  if (key.includes('\u0000')) throw badRequest('invalid storage key: contains NUL');
}

export function createPostgresPhysical(opts: PostgresStorageOptions): PostgresPhysical {
  const table = quoteTable(opts.table ?? DEFAULT_TABLE, 'storage.postgresql.table');
  const haTable = quoteTable(opts.haTable ?? DEFAULT_HA_TABLE, 'storage.postgresql.ha_table');
  const indexName = `"${(opts.table ?? DEFAULT_TABLE).replace(/^.*\./, '')}_parent_idx"`;
  const haName = opts.haTable ?? DEFAULT_HA_TABLE;
  const seqTable = quoteTable(`${haName}_seq`, 'storage.postgresql.ha_table');
  const logTable = quoteTable(`${haName}_log`, 'storage.postgresql.ha_table');
  // One channel per cluster (per HA table): clusters sharing a database do not hear each other.
  const channel = `strongroom_${createHash('sha256').update(haName).digest('hex').slice(0, 24)}`;
  let lastSeq = 0;
  let writesSincePrune = 0;
  let secrets: string[] = [opts.connectionUrl];
  try {
    const u = new URL(opts.connectionUrl);
    if (u.password) secrets = [opts.connectionUrl, u.password, decodeURIComponent(u.password)];
  } catch {
    // Not a URL (a libpq keyword string): the whole string is scrubbed.
  }
  const scrub = (message: string): string => {
    let m = message;
    for (const s of secrets) if (s) m = m.split(s).join('***');
    return m;
  };
  // Loaded here, not at import: knex and its 300 modules (lodash) would cost every server that stores in LevelDB about 5 MB.
  const { knex } = require('knex') as typeof import('knex');
  const pool = (max: number): Knex =>
    knex({
      client: 'pg',
      connection: { connectionString: opts.connectionUrl, connectionTimeoutMillis: CONNECT_TIMEOUT_MS },
      pool: { min: 0, max, idleTimeoutMillis: 30_000 },
      acquireConnectionTimeout: ACQUIRE_TIMEOUT_MS,
      // knex would print connection errors on the console; they reach our log scrubbed, through the callers.
      log: { warn: () => undefined, error: () => undefined, deprecate: () => undefined, debug: () => undefined },
    });
  const db = pool(opts.maxParallel ?? DEFAULT_MAX_PARALLEL);
  /** Connections handed out by client(): closing the storage ends them. */
  const clients = new Set<PgClient>();
  // The HA lock's own connections: a renewal never queues behind a burst of data statements.
  let lockPool: Knex | null = null;

  let closed = false;
  let isReady = false;
  let lastError = '';
  let fenceIdentity: string | null = null;

  const createTables = async (): Promise<void> => {
    await db.raw(
      `CREATE TABLE IF NOT EXISTS ${table} (
         path text COLLATE "C" PRIMARY KEY,
         parent_path text COLLATE "C" NOT NULL,
         value bytea NOT NULL)`,
    );
    await db.raw(`CREATE INDEX IF NOT EXISTS ${indexName} ON ${table} (parent_path, path)`);
    await db.raw(
      `CREATE TABLE IF NOT EXISTS ${haTable} (
         ha_key text COLLATE "C" PRIMARY KEY,
         ha_identity text NOT NULL,
         ha_value text NOT NULL,
         valid_until timestamptz NOT NULL)`,
    );
    if (opts.ha) {
      // The holder's own session (backend pid and start): a standby takes over at once when it is gone.
      await db.raw(`ALTER TABLE ${haTable} ADD COLUMN IF NOT EXISTS ha_pid int, ADD COLUMN IF NOT EXISTS ha_backend_start timestamptz`);
      await db.raw(`CREATE TABLE IF NOT EXISTS ${seqTable} (id int PRIMARY KEY CHECK (id = 1), seq bigint NOT NULL)`);
      await db.raw(`INSERT INTO ${seqTable} (id, seq) VALUES (1, 0) ON CONFLICT (id) DO NOTHING`);
      await db.raw(`CREATE TABLE IF NOT EXISTS ${logTable} (seq bigint NOT NULL, path text COLLATE "C" NOT NULL, PRIMARY KEY (seq, path))`);
    }
  };

  const ready: Promise<void> = (async () => {
    let delay = RETRY_MIN_MS;
    for (;;) {
      if (closed) throw new StrongroomError('unavailable', 'storage is closed');
      try {
        await createTables();
        isReady = true;
        if (lastError) opts.logger?.info('storage: PostgreSQL reachable, tables ready');
        return;
      } catch (err) {
        // Two nodes creating the tables at once: one of them sees a duplicate; the next try succeeds.
        lastError = scrub(err instanceof Error ? err.message : String(err));
        opts.logger?.warn(`storage: cannot reach PostgreSQL or create its tables (${lastError}); retrying in ${delay} ms`, {});
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, RETRY_MAX_MS);
      }
    }
  })();
  ready.catch(() => undefined);

  const up = (): void => {
    if (closed) throw new StrongroomError('unavailable', 'storage is closed');
    if (!isReady) throw new StrongroomError('unavailable', `storage: PostgreSQL is not reachable yet (${lastError || 'connecting'}); retrying`);
  };

  /** Database errors leave here scrubbed, typed unavailable (connection) or internal. */
  const run = async <T>(fn: () => Promise<T>): Promise<T> => {
    up();
    try {
      return await fn();
    } catch (err) {
      if (err instanceof StrongroomError) throw err;
      const e = err as { message?: unknown; code?: unknown };
      const message = scrub(typeof e.message === 'string' ? e.message : String(err));
      const code = typeof e.code === 'string' ? e.code : '';
      // No SQLSTATE, or class 08/53/57: the database is unreachable or overloaded.
      const unavailable = !/^[0-9A-Z]{5}$/.test(code) || ['08', '53', '57'].includes(code.slice(0, 2));
      throw new StrongroomError(unavailable ? 'unavailable' : 'internal', `storage: PostgreSQL: ${message}`);
    }
  };

  const fenceCte = `fence AS (SELECT 1 FROM ${haTable} WHERE ha_key = ? AND ha_identity = ? AND valid_until > now() FOR SHARE)`;
  const fenceArgs = (): string[] => [HA_LOCK_KEY, fenceIdentity as string];
  // The next change number first (writers queue on that row, its lock lasts until commit), then the
  // fence: a writer share-locks the lock row only once it is next, so renewals never wait behind the
  // queue. `ok` has the number when the fence holds (correlated on s, so it is checked after s); a
  // refused write only bumps the number (a gap the log does not need).
  const seqCte = `s AS (UPDATE ${seqTable} SET seq = seq + 1 WHERE id = 1 RETURNING seq), ${fenceCte},
    ok AS (SELECT seq FROM s WHERE EXISTS (SELECT 1 FROM fence WHERE s.seq IS NOT NULL))`;

  /**
   * A multi-statement fenced transaction's first step: the sequence row, as single writes take it
   * (see seqCte), then the lock row shared; a node that no longer holds the lock rolls back.
   */
  const holdFence = async (trx: Knex.Transaction): Promise<void> => {
    await trx.raw(`SELECT 1 FROM ${seqTable} WHERE id = 1 FOR UPDATE`);
    const held = await rows(`SELECT 1 FROM ${haTable} WHERE ha_key = ? AND ha_identity = ? AND valid_until > now() FOR SHARE`, fenceArgs(), trx);
    if (held.length === 0) throw new FencedWriteError();
  };

  /** In a fenced transaction: the next change number, the keys logged under it, NOTIFY at commit. */
  const announce = async (trx: Knex.Transaction, keys: string[]): Promise<string> => {
    const seq = (await rows<{ seq: string }>(`UPDATE ${seqTable} SET seq = seq + 1 WHERE id = 1 RETURNING seq::text AS seq`, [], trx))[0]!.seq;
    for (let i = 0; i < keys.length; i += 1000) {
      const chunk = keys.slice(i, i + 1000);
      await trx.raw(`INSERT INTO ${logTable} (seq, path) VALUES ${chunk.map(() => '(?, ?)').join(', ')}`, chunk.flatMap((k) => [seq, k]));
    }
    await trx.raw(`SELECT pg_notify(?, ?)`, [channel, seq]);
    return seq;
  };

  const committed = (seq: string | number): void => {
    lastSeq = Math.max(lastSeq, Number(seq));
    if (++writesSincePrune >= PRUNE_EVERY) {
      writesSincePrune = 0;
      void db.raw(`DELETE FROM ${logTable} WHERE seq < ?`, [lastSeq - LOG_KEEP]).catch(() => undefined);
    }
  };

  const rows = async <R>(sql: string, bindings: readonly unknown[], trx: Knex | Knex.Transaction = db): Promise<R[]> =>
    ((await trx.raw(sql, bindings as Knex.RawBinding[])) as { rows: R[] }).rows;

  /**
   * The rows under prefix in key order, a page at a time (keyset pagination); with a range,
   * from past `prefix + after` and at most `limit` rows, a window of up to MAX_SCAN_PAGE in one query.
   */
  async function* pages<R extends { path: string }>(columns: string, prefix: string, range?: ScanRange): AsyncIterable<R[]> {
    const upper = prefixUpperBound(prefix);
    const window = scanWindow(prefix, range);
    let after: string | null = window.after;
    let left = window.limit;
    for (;;) {
      const size = left > 0 ? Math.min(left, MAX_SCAN_PAGE) : SCAN_CHUNK;
      const conds = ['path >= ?'];
      const args: unknown[] = [prefix];
      if (upper !== undefined) {
        conds.push('path < ?');
        args.push(upper);
      }
      if (after !== null) {
        conds.push('path > ?');
        args.push(after);
      }
      const page = await run(() => rows<R>(`SELECT ${columns} FROM ${table} WHERE ${conds.join(' AND ')} ORDER BY path LIMIT ${size}`, args));
      if (page.length > 0) yield page;
      if (page.length < size) return;
      if (left > 0 && (left -= page.length) === 0) return;
      after = (page[page.length - 1] as R).path;
    }
  }

  const physical: PostgresPhysical = {
    ready,
    db,
    lockDb: () => (lockPool ??= pool(2)),
    haTable,
    scrub,
    fence(identity) {
      fenceIdentity = identity;
    },
    changeLog: { seqTable, logTable, channel },
    client: () => {
      // Loaded here, like knex: a server on LevelDB never loads pg.
      const { Client } = require('pg') as { Client: new (o: { connectionString: string; connectionTimeoutMillis: number }) => PgClient };
      const c = new Client({ connectionString: opts.connectionUrl, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
      clients.add(c);
      c.on('end', () => clients.delete(c));
      return c;
    },
    lastWrittenSeq: () => lastSeq,

    get: (key) =>
      run(async () => {
        const r = await rows<{ value: Buffer }>(`SELECT value FROM ${table} WHERE path = ?`, [key]);
        return r[0] ? r[0].value : null;
      }),

    put: (key, value) =>
      run(async () => {
        checkKey(key);
        const v = Buffer.from(value);
        if (fenceIdentity === null) {
          await db.raw(`INSERT INTO ${table} (path, parent_path, value) VALUES (?, ?, ?) ON CONFLICT (path) DO UPDATE SET value = EXCLUDED.value`, [key, parentOf(key), v]);
          return;
        }
        const r = await rows<{ seq: string }>(
          `WITH ${seqCte},
           w AS (INSERT INTO ${table} (path, parent_path, value) SELECT ?, ?, ? FROM ok
                 ON CONFLICT (path) DO UPDATE SET value = EXCLUDED.value RETURNING 1),
           l AS (INSERT INTO ${logTable} (seq, path) SELECT seq, ? FROM ok RETURNING 1)
           SELECT seq::text AS seq, pg_notify(?, seq::text) FROM ok`,
          [...fenceArgs(), key, parentOf(key), v, key, channel],
        );
        if (r.length === 0) throw new FencedWriteError();
        committed(r[0]!.seq);
      }),

    delete: (key) =>
      run(async () => {
        if (fenceIdentity === null) {
          await db.raw(`DELETE FROM ${table} WHERE path = ?`, [key]);
          return;
        }
        const r = await rows<{ seq: string }>(
          `WITH ${seqCte},
           gone AS (DELETE FROM ${table} WHERE path = ? AND EXISTS (SELECT 1 FROM ok) RETURNING 1),
           l AS (INSERT INTO ${logTable} (seq, path) SELECT seq, ? FROM ok RETURNING 1)
           SELECT seq::text AS seq, pg_notify(?, seq::text) FROM ok`,
          [...fenceArgs(), key, key, channel],
        );
        if (r.length === 0) throw new FencedWriteError();
        committed(r[0]!.seq);
      }),

    batch: (ops: PhysicalOp[]) =>
      run(async () => {
        if (ops.length === 0) return;
        // The batch's effect is each key's last op; puts and deletes then touch disjoint keys,
        // so two statements in one transaction apply it whatever their order.
        const last = new Map<string, PhysicalOp>();
        for (const op of ops) {
          if (op.type === 'put') checkKey(op.key);
          last.delete(op.key);
          last.set(op.key, op);
        }
        const puts: Array<{ path: string; parent_path: string; value: Buffer }> = [];
        const deletes: string[] = [];
        for (const op of last.values()) {
          if (op.type === 'put') puts.push({ path: op.key, parent_path: parentOf(op.key), value: Buffer.from(op.value) });
          else deletes.push(op.key);
        }
        let seq: string | null = null;
        await db.transaction(async (trx) => {
          if (fenceIdentity !== null) {
            await holdFence(trx);
            seq = await announce(trx, [...last.keys()]);
          }
          for (let i = 0; i < deletes.length; i += 1000) {
            const chunk = deletes.slice(i, i + 1000);
            await trx.raw(`DELETE FROM ${table} WHERE path IN (${chunk.map(() => '?').join(', ')})`, chunk);
          }
          for (let i = 0; i < puts.length; i += 1000) {
            const chunk = puts.slice(i, i + 1000);
            const values = chunk.map(() => '(?, ?, ?)').join(', ');
            await trx.raw(
              `INSERT INTO ${table} (path, parent_path, value) VALUES ${values} ON CONFLICT (path) DO UPDATE SET value = EXCLUDED.value`,
              chunk.flatMap((p) => [p.path, p.parent_path, p.value]),
            );
          }
        });
        if (seq !== null) committed(seq);
      }),

    list: (prefix) =>
      run(async () => {
        const upper = prefixUpperBound(prefix);
        if (prefix === '' || prefix.endsWith('/')) {
          // Direct children by parent_path; sub-folders from the parent paths below (index range).
          const files = await rows<{ path: string }>(`SELECT path FROM ${table} WHERE parent_path = ?`, [prefix]);
          const deeper = upper === undefined ? `parent_path > ?` : `parent_path > ? AND parent_path < ?`;
          const folders = await rows<{ folder: string }>(
            `SELECT DISTINCT split_part(substr(parent_path, ?), '/', 1) || '/' AS folder FROM ${table} WHERE ${deeper}`,
            [Array.from(prefix).length + 1, prefix, ...(upper === undefined ? [] : [upper])],
          );
          const out = [...files.map((f) => f.path.slice(prefix.length)), ...folders.map((f) => f.folder)];
          return out.sort(compareKeys);
        }
        // A prefix that is not a folder (rare): read the keys of its range and cut them at the next '/'.
        const keys = await rows<{ path: string }>(
          upper === undefined ? `SELECT path FROM ${table} WHERE path >= ?` : `SELECT path FROM ${table} WHERE path >= ? AND path < ?`,
          upper === undefined ? [prefix] : [prefix, upper],
        );
        const out = new Set<string>();
        for (const { path } of keys) {
          const rest = path.slice(prefix.length);
          const i = rest.indexOf('/');
          if (rest !== '') out.add(i === -1 ? rest : rest.slice(0, i + 1));
        }
        return [...out].sort(compareKeys);
      }),

    async *scan(prefix): AsyncIterable<PhysicalEntry> {
      for await (const page of pages<{ path: string; value: Buffer }>('path, value', prefix)) {
        for (const r of page) yield { key: r.path, value: r.value };
      }
    },

    async *scanKeys(prefix, range): AsyncIterable<string> {
      for await (const page of pages<{ path: string }>('path', prefix, range)) {
        for (const r of page) yield r.path;
      }
    },

    snapshots: {
      // One repeatable-read transaction: every page reads the same instant while writes go on.
      async *read(): AsyncIterable<PhysicalEntry> {
        const trx = await run(() => db.transaction({ isolationLevel: 'repeatable read', readOnly: true }));
        try {
          let after = '';
          for (;;) {
            const page = await run(() => rows<{ path: string; value: Buffer }>(`SELECT path, value FROM ${table} WHERE path > ? ORDER BY path LIMIT ${SCAN_CHUNK}`, [after], trx));
            for (const r of page) yield { key: r.path, value: r.value };
            if (page.length < SCAN_CHUNK) return;
            after = (page[page.length - 1] as { path: string }).path;
          }
        } finally {
          await trx.commit().catch(() => undefined);
        }
      },
      stagingDir: tmpdir(),
      // One transaction: a process killed meanwhile leaves it uncommitted, and PostgreSQL rolls it back.
      restore: (file) =>
        run(async () => {
          let seq: string | null = null;
          await db.transaction(async (trx) => {
            if (fenceIdentity !== null) {
              await holdFence(trx);
            }
            await trx.raw(`DELETE FROM ${table}`);
            let chunk: PhysicalEntry[] = [];
            const insert = async () => {
              if (chunk.length === 0) return;
              await trx.raw(
                `INSERT INTO ${table} (path, parent_path, value) VALUES ${chunk.map(() => '(?, ?, ?)').join(', ')}`,
                chunk.flatMap((e) => [e.key, parentOf(e.key), Buffer.from(e.value)]),
              );
              chunk = [];
            };
            for await (const e of readSnapshotFile(file)) {
              checkKey(e.key);
              chunk.push(e);
              if (chunk.length >= 500) await insert();
            }
            await insert();
            // Everything changed: the standbys rebuild their state (a mount table change makes them).
            if (fenceIdentity !== null) seq = await announce(trx, ['core/mounts']);
          });
          if (seq !== null) committed(seq);
          rmSync(file, { force: true });
        }),
    },

    async close() {
      closed = true;
      await Promise.all([db.destroy(), lockPool?.destroy(), ...[...clients].map((c) => c.end().catch(() => undefined))]);
    },
  };
  return physical;
}
