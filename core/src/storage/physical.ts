/**
 * Physical storage: the bytes under the barrier. Everything stored through it
 * by the core is already encrypted by the barrier (core/src/barrier); keys are
 * plain text, so no secret may ever appear in a key.
 */
export interface PhysicalEntry {
  key: string;
  value: Uint8Array;
}

/** A window of a key scan: keys strictly after `prefix + after`, at most `limit` of them (0: all). */
export interface ScanRange {
  after?: string;
  limit?: number;
}

/** One operation of an atomic batch. */
export type PhysicalOp = { type: 'put'; key: string; value: Uint8Array } | { type: 'delete'; key: string };

export interface Physical {
  get(key: string): Promise<Uint8Array | null>;
  /** Durable when it resolves (fsync'd or group-committed): an acknowledged write survives SIGKILL. */
  put(key: string, value: Uint8Array): Promise<void>;
  delete(key: string): Promise<void>;
  /** One level below prefix, '/'-delimited, sorted; sub-folders end in '/'. */
  list(prefix: string): Promise<string[]>;
  /** Atomic and durable: all of the ops or none. */
  batch(ops: PhysicalOp[]): Promise<void>;
  /** Every key below prefix (all levels), sorted, streamed so callers need not hold all in memory. */
  scan(prefix: string): AsyncIterable<PhysicalEntry>;
  /**
   * The keys of `scan`, without reading (or, above the barrier, decrypting) a value. With a
   * range, one ordered read from just past `prefix + after` (a paged recursive listing).
   */
  scanKeys(prefix: string, range?: ScanRange): AsyncIterable<string>;
  /**
   * The keys of `scanKeys(prefix)` a page at a time, where the backend reads them in pages: a
   * caller walking a million keys (the lease restore) then awaits once a page, not once a key.
   * Absent: `keyPages` (keys.ts) pages `scanKeys`.
   */
  scanKeyPages?(prefix: string): AsyncIterable<readonly string[]>;
  close(): Promise<void>;
  /** Point-in-time copies and their restore (storage/snapshot-format.ts); absent on a backend without them. */
  readonly snapshots?: SnapshotStore;
}

/**
 * What `sys/storage/snapshot` and its restore need from a backend: a
 * consistent copy taken while writes go on, and an all-or-nothing replace.
 */
export interface SnapshotStore {
  /** Every entry as of one instant, in key order, streamed. */
  read(): AsyncIterable<PhysicalEntry>;
  /** Where a restore stages the snapshot file it verified (the data's own filesystem when recovery needs it). */
  readonly stagingDir: string;
  /**
   * Replaces every entry with those of a verified snapshot file in `stagingDir`
   * (and removes the file). Atomic across crashes: killed at any point, the
   * store comes back holding either the old entries or the snapshot's.
   */
  restore(file: string): Promise<void>;
}
