/**
 * Snapshots of the whole store (`sys/storage/snapshot`, its restore, and the
 * scheduled ones of the `snapshot` config block).
 *
 * A snapshot is the physical entries copied as stored, so it is as encrypted
 * as the store (storage/snapshot-format.ts). A restore happens in two steps:
 * here, the upload is read into a staging file while the server keeps serving,
 * checked entry by entry (format, order, checksum, and whose barrier it is),
 * and nothing is changed when anything is wrong; then the core (server/core.ts)
 * stops serving, tears down what the unseal built, has the backend replace its
 * entries all-or-nothing (SnapshotStore.restore) and builds it again from the
 * restored storage.
 *
 * A snapshot of this barrier (its keyring opens with the root key in memory)
 * is restored with the seal's own entries (`core/root-key`, `core/seal-config`,
 * and a static seal's records and recovery config) kept as they are now, so
 * today's unseal keys, seal key and recovery keys still open the restored
 * store (the root key is the same). A snapshot of another barrier is refused unless
 * forced; forced, it comes with its own seal entries and the server seals:
 * that barrier's unseal keys open it.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { StrongroomError, badRequest } from '@strongroom/sdk-plugin/host';
import { KEYRING_PATH, RECOVERY_CONFIG_PATH, RECOVERY_KEY_PATH, ROOT_KEY_PATH, SEAL_CONFIG_PATH, SEAL_STORED_KEY_PATH, type Barrier } from '../barrier/barrier.js';
import type { CoreLogger } from '../log/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Physical, PhysicalEntry, SnapshotStore } from '../storage/physical.js';
import { commitFile, decodeSnapshot, encodeSnapshot, writeFileSynced } from '../storage/snapshot-format.js';

/** A verified upload, waiting for the core to apply it. */
export interface StagedRestore {
  file: string;
  entries: number;
  /** Its keyring opens with this barrier's root key. */
  sameBarrier: boolean;
}

export interface SnapshotSchedule {
  intervalMs: number;
  path: string;
  retain: number;
}

export interface SnapshotsDeps {
  physical: Pick<Physical, 'get' | 'snapshots'>;
  barrier: Pick<Barrier, 'opensKeyring'>;
  storageType: string;
  /** Restore is refused on HA storage: the other nodes would keep serving from their memory meanwhile. */
  haEnabled: boolean;
  logger: CoreLogger;
  metrics: Pick<Metrics, 'snapshotLastSuccess'>;
}

/** The seal's entries, in key order (all after `core/keyring`): a restore of this barrier keeps today's. */
const SEAL_ENTRIES = [RECOVERY_CONFIG_PATH, ROOT_KEY_PATH, SEAL_CONFIG_PATH, RECOVERY_KEY_PATH, SEAL_STORED_KEY_PATH].sort();

const FILE_PREFIX = 'strongroom-snapshot-';
const FILE_SUFFIX = '.snap';

export function createSnapshots(deps: SnapshotsDeps) {
  const { physical, logger } = deps;
  const log = logger.named('snapshot');
  /** The request whose restore is being staged or applied: one at a time. */
  let busy: string | null = null;
  const staged = new Map<string, StagedRestore>();

  const store = (): SnapshotStore => {
    if (!physical.snapshots) throw badRequest(`storage "${deps.storageType}" does not support snapshots`);
    return physical.snapshots;
  };

  /** The snapshot file's bytes of the store as it is now, streamed. */
  const save = (): AsyncIterable<Buffer> => encodeSnapshot(store().read(), deps.storageType);

  /**
   * Reads an upload into the staging area and checks all of it. Resolves once
   * it is complete and sound (the core then applies it: `take`); throws a 400
   * naming what is wrong otherwise, having changed nothing.
   */
  async function stage(requestId: string, upload: AsyncIterable<Uint8Array> | undefined, force: boolean): Promise<void> {
    const s = store();
    if (deps.haEnabled) throw badRequest('snapshot restore is not supported on HA storage (ha_enabled): the standbys would keep serving from memory');
    if (!upload) throw badRequest('the snapshot must be the request body');
    if (busy !== null) throw new StrongroomError('conflict', 'another snapshot restore is in progress; send this one when it has finished');
    busy = requestId;
    const file = join(s.stagingDir, `upload-${randomUUID()}.partial`);
    try {
      const now = new Map<string, Uint8Array | null>();
      for (const key of SEAL_ENTRIES) now.set(key, await physical.get(key));
      let sameBarrier: boolean | null = null;
      let entries = 0;
      const decoded = decodeSnapshot(upload);
      // 'core/keyring' sorts before the seal's entries: whose barrier it is is known before they come.
      async function* checked(): AsyncIterable<PhysicalEntry> {
        /** This barrier's seal entries not yet written, in key order: each goes in its place, whether the snapshot has it or not. */
        const mine = [...SEAL_ENTRIES];
        const ours = function* (before: string | null): Iterable<PhysicalEntry> {
          while (mine.length > 0 && (before === null || mine[0]! < before)) {
            const key = mine.shift()!;
            const value = now.get(key);
            if (value) yield { key, value };
          }
        };
        for (;;) {
          const r = await decoded.next();
          if (r.done) break;
          const e = r.value;
          entries++;
          if (e.key === KEYRING_PATH) {
            sameBarrier = deps.barrier.opensKeyring(e.value);
            if (!sameBarrier && !force) {
              throw badRequest('snapshot refused: it is a snapshot of another barrier (its keyring does not open with this server\'s root key); restore it with -force (sys/storage/snapshot-restore-force) to replace this server\'s data and seal with that barrier\'s keys; nothing was changed');
            }
          }
          if (e.key === ROOT_KEY_PATH || e.key === SEAL_CONFIG_PATH) {
            if (sameBarrier === null) throw badRequest('snapshot refused: it holds no keyring; nothing was changed');
          }
          if (sameBarrier === true && now.get(ROOT_KEY_PATH)) {
            // Today's seal entries up to this key (this one included: the snapshot's own is dropped).
            const seal = SEAL_ENTRIES.includes(e.key);
            yield* ours(seal ? `${e.key}\0` : e.key);
            if (seal) continue;
          }
          yield e;
        }
        if (sameBarrier === true && now.get(ROOT_KEY_PATH)) yield* ours(null);
      }
      await writeFileSynced(file, encodeSnapshot(checked(), deps.storageType));
      if (sameBarrier === null) throw badRequest('snapshot refused: it holds no keyring (not a snapshot of an initialized server); nothing was changed');
      staged.set(requestId, { file, entries, sameBarrier });
      log.info('snapshot restore: upload verified and staged', { entries, same_barrier: sameBarrier });
    } catch (err) {
      rmSync(file, { force: true });
      busy = null;
      log.warn('snapshot restore refused', { error: err instanceof Error ? err.message : String(err) });
      throw err;
    }
  }

  /** The restore this request staged, if any: the core applies it after the request's reply is ready. */
  const take = (requestId: string): StagedRestore | undefined => {
    const r = staged.get(requestId);
    staged.delete(requestId);
    return r;
  };

  /** Replaces the store with a staged upload (the core has stopped serving). */
  async function apply(r: StagedRestore): Promise<void> {
    await store().restore(r.file);
  }

  /** A staged or applied restore is over, whatever its outcome: the next one may start. */
  const finish = (requestId: string, r: StagedRestore | undefined): void => {
    staged.delete(requestId);
    if (r) rmSync(r.file, { force: true });
    if (busy === requestId) busy = null;
  };

  /** One scheduled snapshot: written beside, renamed into place, then the oldest beyond `retain` removed. */
  async function writeScheduled(schedule: SnapshotSchedule): Promise<string> {
    const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\.(\d{3})Z$/, '$1Z');
    const name = `${FILE_PREFIX}${stamp}${FILE_SUFFIX}`;
    const partial = join(schedule.path, `.${name}.partial`);
    try {
      await writeFileSynced(partial, save());
      await commitFile(partial, join(schedule.path, name));
    } catch (err) {
      rmSync(partial, { force: true });
      throw err;
    }
    const ours = readdirSync(schedule.path)
      .filter((n) => n.startsWith(FILE_PREFIX) && n.endsWith(FILE_SUFFIX))
      .sort();
    for (const old of ours.slice(0, Math.max(0, ours.length - schedule.retain))) rmSync(join(schedule.path, old), { force: true });
    return name;
  }

  /** Starts the `snapshot` block's schedule; the returned function stops it. */
  function schedule(schedule: SnapshotSchedule): () => void {
    let running = false;
    const tick = async () => {
      if (running) return;
      if (busy !== null) {
        log.info('scheduled snapshot skipped: a snapshot restore is in progress');
        return;
      }
      running = true;
      try {
        const name = await writeScheduled(schedule);
        deps.metrics.snapshotLastSuccess.set(Date.now() / 1000);
        log.info('scheduled snapshot written', { file: join(schedule.path, name), bytes: statSync(join(schedule.path, name)).size });
      } catch (err) {
        log.error('scheduled snapshot failed', { path: schedule.path, error: err instanceof Error ? err.message : String(err) });
      } finally {
        running = false;
      }
    };
    const timer = setInterval(() => void tick(), schedule.intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  return { save, stage, take, apply, finish, schedule };
}

export type Snapshots = ReturnType<typeof createSnapshots>;
