/**
 * LevelDB Physical. Durability: a write's promise resolves only after a
 * `sync: true` batch containing it has been fsync'd. Writes arriving while
 * another commit is being prepared or is in flight are coalesced into one
 * batch (group commit), so concurrent writers share fsyncs instead of queueing
 * behind one each. Each caller's ops stay contiguous and in call order, so a
 * caller's batch is still all-or-nothing.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Level } from 'level';
import { StrongroomError } from '@strongroom/sdk-plugin/host';
import type { Physical, PhysicalEntry, PhysicalOp } from './physical.js';
import { assertValidKey, pastFolder, prefixUpperBound, scanWindow } from './keys.js';
import { commitFile, readSnapshotFile, verifySnapshotFile } from './snapshot-format.js';

export interface LevelPhysicalOptions {
  path: string;
  logger?: { info(msg: string, meta?: Record<string, unknown>): void };
}

/**
 * A restore stages its verified snapshot file in this sub-directory of the
 * data directory (LevelDB ignores it), then renames it to READY: from that
 * rename on, the restore is decided. Applying it (every key deleted, every
 * entry of the file written) is idempotent, so a process killed while
 * applying finishes it when the store is next opened, before anything reads.
 */
const STAGING = 'snapshot-staging';
const READY = 'restore-ready.snap';
const RESTORE_BATCH = 1000;

export interface LevelPhysical extends Physical {
  /** Commit counters, so tests and metrics can see that fsyncs are shared. */
  stats(): { commits: number; writes: number };
}

type LevelOp = { type: 'put'; key: string; value: Uint8Array } | { type: 'del'; key: string };

interface PendingWrite {
  ops: LevelOp[];
  resolve: () => void;
  reject: (err: unknown) => void;
}

// How many keys a list reads per native call, and entries a scan reads ahead.
const ITERATOR_CHUNK = 256;
const SCAN_CHUNK = 1024;

/**
 * The data directory and every file in it are owner-only (0700 / 0600), as
 * Vault's file storage makes them. LevelDB creates its files (logs, tables,
 * MANIFEST, LOCK) from its own threads with the process umask and no mode of
 * ours, so the umask is the only lever: a process holding file storage runs
 * with umask 077. Files left by an older, laxer version are tightened at open.
 */
function ownerOnly(dir: string): void {
  process.umask(0o077);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  for (const name of readdirSync(dir)) {
    const file = join(dir, name);
    chmodSync(file, statSync(file).isDirectory() ? 0o700 : 0o600);
  }
}

/**
 * An iterator's items in order, a chunk at a time, reading ahead: the next chunk is read on
 * LevelDB's thread while the caller works through this one (a lease restore parses its keys meanwhile).
 */
async function* readAheadPages<T>(it: { nextv(size: number): Promise<T[]>; close(): Promise<void> }, chunk = SCAN_CHUNK): AsyncIterable<T[]> {
  let next: Promise<T[]> | null = it.nextv(chunk);
  try {
    for (;;) {
      const items = await next;
      next = null;
      if (items.length === 0) break;
      next = it.nextv(chunk);
      yield items;
    }
  } finally {
    // A caller that stops early leaves a read in flight: let it settle before closing.
    if (next !== null) await next.catch(() => undefined);
    await it.close();
  }
}

async function* readAhead<T>(it: { nextv(size: number): Promise<T[]>; close(): Promise<void> }, chunk = SCAN_CHUNK): AsyncIterable<T> {
  for await (const items of readAheadPages(it, chunk)) yield* items;
}

export async function createLevelPhysical(opts: LevelPhysicalOptions): Promise<LevelPhysical> {
  ownerOnly(opts.path);
  const db = new Level<string, Buffer>(opts.path, { keyEncoding: 'utf8', valueEncoding: 'buffer' });
  await db.open();
  const stagingDir = join(opts.path, STAGING);
  mkdirSync(stagingDir, { recursive: true, mode: 0o700 });
  const ready = join(stagingDir, READY);

  /** While set, a snapshot read is refused: it would copy a mix of the old entries and the restored ones. */
  let applying = false;
  /** Every key deleted, then every entry of the (verified) file put; the last batch is fsync'd. */
  const apply = async (file: string): Promise<void> => {
    applying = true;
    try {
      await replaceAll(file);
    } finally {
      applying = false;
    }
  };
  const replaceAll = async (file: string): Promise<void> => {
    let ops: LevelOp[] = [];
    const flush = async (sync: boolean) => {
      await db.batch(ops, { sync });
      ops = [];
    };
    for await (const key of readAhead(db.keys())) {
      ops.push({ type: 'del', key });
      if (ops.length >= RESTORE_BATCH) await flush(false);
    }
    for await (const e of readSnapshotFile(file)) {
      ops.push({ type: 'put', key: e.key, value: Buffer.from(e.value) });
      if (ops.length >= RESTORE_BATCH) await flush(false);
    }
    await flush(true);
    rmSync(file);
  };

  for (const name of readdirSync(stagingDir)) if (name !== READY) rmSync(join(stagingDir, name), { recursive: true, force: true });
  if (existsSync(ready)) {
    // Killed while applying a restore: it was decided, so it is finished (the file is checked again first).
    opts.logger?.info('storage: completing an interrupted snapshot restore');
    await verifySnapshotFile(ready).catch((err: unknown) => {
      throw new Error(`storage: an interrupted snapshot restore cannot be finished: ${ready} is damaged (${err instanceof Error ? err.message : String(err)}); restore a good snapshot after moving it away`);
    });
    await apply(ready);
    opts.logger?.info('storage: snapshot restore completed');
  }

  // Set when applying a restore failed in this process: the entries are a mix until the next open finishes it.
  let unfinished: string | null = null;
  const usable = (): void => {
    if (unfinished !== null) throw new StrongroomError('unavailable', unfinished);
  };

  /**
   * One fsync'd LevelDB batch, handed straight to classic-level's implementation of abstract-level's
   * batch. The public `db.batch` clones, validates and re-encodes every operation on the event
   * loop first (measured: about 5 µs per operation, three per lease, against 2 µs for the native
   * copy); here keys are already checked strings and values bytes, which is what it would pass on
   * (utf8 keys, buffer values: no transcoding), and no hook or write event is in use. The native
   * call needs an open database (the public one checks it): after close() a write fails instead.
   */
  const nativeBatch = (db as unknown as { _batch(ops: LevelOp[], options: { sync: boolean }): Promise<void> })._batch.bind(db);
  const writeSynced = async (ops: LevelOp[]): Promise<void> => {
    if (db.status !== 'open') throw new StrongroomError('unavailable', 'storage is closed');
    await nativeBatch(ops, { sync: true });
  };

  let pending: PendingWrite[] = [];
  let scheduled = false;
  let inFlight: Promise<void> | null = null;
  let commits = 0;
  let writes = 0;

  const commit = async (group: PendingWrite[]): Promise<void> => {
    const ops: LevelOp[] = [];
    for (const w of group) for (const op of w.ops) ops.push(op);
    try {
      await writeSynced(ops);
      commits++;
      writes += group.length;
      for (const w of group) w.resolve();
    } catch (err) {
      for (const w of group) w.reject(err);
    }
  };

  // One commit in flight at a time; everything that arrived meanwhile goes
  // into the next one. The first write of a quiet period waits only for the
  // current event-loop turn (setImmediate), which groups the I/O callbacks of
  // that turn.
  const pump = (): void => {
    scheduled = false;
    if (inFlight !== null || pending.length === 0) return;
    const group = pending;
    pending = [];
    inFlight = commit(group).finally(() => {
      inFlight = null;
      if (pending.length > 0) pump();
    });
  };

  const enqueue = (ops: LevelOp[]): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      pending.push({ ops, resolve, reject });
      if (!scheduled && inFlight === null) {
        scheduled = true;
        setImmediate(pump);
      }
    });

  const rangeOf = (prefix: string): { gte: string; lt?: string } => {
    const lt = prefixUpperBound(prefix);
    return lt === undefined ? { gte: prefix } : { gte: prefix, lt };
  };

  return {
    // Synchronous on purpose: LevelDB answers from its memtable and block cache in a few µs,
    // while an async get takes a snapshot on this thread under the DB mutex that the thread
    // pool's reads and writes hold, which on two cores blocked the event loop for milliseconds
    // under a write load (measured: ~15 µs CPU and up to 10 ms blocked per async get, 2-4 µs sync).
    async get(key) {
      usable();
      const v = db.getSync(key);
      return v === undefined ? null : v;
    },
    async put(key, value) {
      usable();
      assertValidKey(key);
      return enqueue([{ type: 'put', key, value }]);
    },
    async delete(key) {
      usable();
      return enqueue([{ type: 'del', key }]);
    },
    async batch(ops: PhysicalOp[]) {
      usable();
      if (ops.length === 0) return;
      const levelOps: LevelOp[] = [];
      for (const op of ops) {
        if (op.type === 'put') {
          assertValidKey(op.key);
          levelOps.push({ type: 'put', key: op.key, value: op.value });
        } else {
          levelOps.push({ type: 'del', key: op.key });
        }
      }
      return enqueue(levelOps);
    },
    async list(prefix) {
      usable();
      const out: string[] = [];
      const it = db.keys(rangeOf(prefix));
      try {
        // `skipping` is the full key prefix of the sub-folder just listed; its
        // keys are passed over, and a seek jumps past the rest of the sub-tree
        // instead of reading it.
        let skipping: string | null = null;
        for (;;) {
          const keys = await it.nextv(ITERATOR_CHUNK);
          if (keys.length === 0) break;
          for (const k of keys) {
            if (skipping !== null && k.startsWith(skipping)) continue;
            skipping = null;
            const rest = k.slice(prefix.length);
            const i = rest.indexOf('/');
            if (i === -1) {
              if (rest !== '') out.push(rest);
            } else {
              const folder = rest.slice(0, i + 1);
              out.push(folder);
              skipping = prefix + folder;
            }
          }
          const last = keys[keys.length - 1] as string;
          if (skipping !== null && last.startsWith(skipping)) it.seek(pastFolder(skipping));
        }
      } finally {
        await it.close();
      }
      return out;
    },
    async *scan(prefix): AsyncIterable<PhysicalEntry> {
      usable();
      for await (const [key, value] of readAhead(db.iterator(rangeOf(prefix)))) yield { key, value };
    },
    scanKeys(prefix, range) {
      const { after, limit } = scanWindow(prefix, range);
      const bounds: { gte?: string; gt?: string; lt?: string; limit?: number } = rangeOf(prefix);
      if (after !== null) {
        delete bounds.gte;
        bounds.gt = after;
      }
      if (limit > 0) bounds.limit = limit;
      return readAhead(db.keys(bounds), limit > 0 ? Math.min(limit, SCAN_CHUNK) : SCAN_CHUNK);
    },
    scanKeyPages(prefix) {
      return readAheadPages(db.keys(rangeOf(prefix)));
    },
    async close() {
      while (inFlight !== null || pending.length > 0) {
        if (inFlight === null) pump();
        await inFlight;
      }
      await db.close();
    },
    stats: () => ({ commits, writes }),
    snapshots: {
      // A LevelDB iterator reads from the implicit snapshot taken when it is created.
      async *read(): AsyncIterable<PhysicalEntry> {
        usable();
        if (applying) throw new StrongroomError('unavailable', 'a snapshot restore is being applied: snapshot again once it is done');
        for await (const [key, value] of readAhead(db.iterator())) yield { key, value };
      },
      stagingDir,
      async restore(file) {
        // The core stopped writing before a restore; a commit still in flight lands first.
        while (inFlight !== null || pending.length > 0) {
          if (inFlight === null) pump();
          await inFlight;
        }
        await commitFile(file, ready);
        try {
          await apply(ready);
        } catch (err) {
          unfinished = `storage: a snapshot restore failed while being applied (${err instanceof Error ? err.message : String(err)}); restart the server to finish it`;
          throw err;
        }
      },
    },
  };
}
