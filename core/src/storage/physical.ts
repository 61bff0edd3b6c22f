/**
 * Physical storage: the bytes under the barrier. Everything stored through it
 * by the core is already encrypted by the barrier (core/src/barrier); keys are
 * plain text, so no secret may ever appear in a key.
 */
export interface PhysicalEntry {
  key: string;
  value: Uint8Array;
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
  /** The keys of `scan`, without reading (or, above the barrier, decrypting) a value. */
  scanKeys(prefix: string): AsyncIterable<string>;
  close(): Promise<void>;
}
