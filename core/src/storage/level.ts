/**
 * LevelDB Physical. Durability: a write's promise resolves only after a
 * `sync: true` batch containing it has been fsync'd. Writes arriving while
 * another commit is being prepared or is in flight are coalesced into one
 * batch (group commit), so concurrent writers share fsyncs instead of queueing
 * behind one each. Each caller's ops stay contiguous and in call order, so a
 * caller's batch is still all-or-nothing.
 */
import { chmodSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Level } from 'level';
import type { Physical, PhysicalEntry, PhysicalOp } from './physical.js';
import { assertValidKey, pastFolder, prefixUpperBound } from './keys.js';

export interface LevelPhysicalOptions {
  path: string;
}

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

export async function createLevelPhysical(opts: LevelPhysicalOptions): Promise<LevelPhysical> {
  ownerOnly(opts.path);
  const db = new Level<string, Buffer>(opts.path, { keyEncoding: 'utf8', valueEncoding: 'buffer' });
  await db.open();

  let pending: PendingWrite[] = [];
  let scheduled = false;
  let inFlight: Promise<void> | null = null;
  let commits = 0;
  let writes = 0;

  const commit = async (group: PendingWrite[]): Promise<void> => {
    const ops: LevelOp[] = [];
    for (const w of group) for (const op of w.ops) ops.push(op);
    try {
      await db.batch(ops, { sync: true });
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
    async get(key) {
      const v = await db.get(key);
      return v === undefined ? null : v;
    },
    async put(key, value) {
      assertValidKey(key);
      return enqueue([{ type: 'put', key, value }]);
    },
    async delete(key) {
      return enqueue([{ type: 'del', key }]);
    },
    async batch(ops: PhysicalOp[]) {
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
      const it = db.iterator(rangeOf(prefix));
      // Read-ahead: the next chunk is read on LevelDB's thread while the caller works
      // through this one (a lease restore decrypts and parses each entry meanwhile).
      let next: Promise<[string, Buffer][]> | null = it.nextv(SCAN_CHUNK);
      try {
        for (;;) {
          const entries = await next;
          next = null;
          if (entries.length === 0) break;
          next = it.nextv(SCAN_CHUNK);
          for (const [key, value] of entries) yield { key, value };
        }
      } finally {
        // A caller that stops early leaves a read in flight: let it settle before closing.
        if (next !== null) await next.catch(() => undefined);
        await it.close();
      }
    },
    async *scanKeys(prefix): AsyncIterable<string> {
      const it = db.keys(rangeOf(prefix));
      let next: Promise<string[]> | null = it.nextv(SCAN_CHUNK);
      try {
        for (;;) {
          const keys = await next;
          next = null;
          if (keys.length === 0) break;
          next = it.nextv(SCAN_CHUNK);
          yield* keys;
        }
      } finally {
        if (next !== null) await next.catch(() => undefined);
        await it.close();
      }
    },
    async close() {
      while (inFlight !== null || pending.length > 0) {
        if (inFlight === null) pump();
        await inFlight;
      }
      await db.close();
    },
    stats: () => ({ commits, writes }),
  };
}
