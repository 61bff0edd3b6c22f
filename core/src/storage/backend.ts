/**
 * What a storage backend is to the rest of the core: a name (the label of
 * `storage "<name>" { ... }`), the schema of its config block, and a factory
 * that opens it. A backend that can run a cluster (one active node, standbys
 * forwarding to it) also hands out the HA lock the nodes contend for.
 */
import type { z } from 'zod';
import type { Physical } from './physical.js';

export interface LockHolder {
  identity: string;
  /** The holder's advertised API address. */
  value: string;
  /** How long the holder's lease has left by the database's clock (when the backend knows): a standby tries again right then. */
  remainingMs?: number;
}

/** The lock one node of an HA cluster holds while it is active (ha/ha-manager.ts contends for it). */
export interface HaLock {
  readonly identity: string;
  /** True when this node holds the lock afterwards. */
  tryAcquire(): Promise<boolean>;
  /** True while the lock is still ours (its expiry pushed forward). */
  renew(): Promise<boolean>;
  release(): Promise<void>;
  /** The current, unexpired holder, or null. */
  holder(): Promise<LockHolder | null>;
  /** From now on the storage writes only while this node holds the lock (a node that lost it cannot write). */
  fenceWrites(): void;
}

/**
 * What a standby follows to keep its caches current: every committed write of
 * the active node has a sequence number, and the keys it changed can be read
 * back by number (storage/postgres-changes.ts).
 */
export interface ChangeFeed {
  /** The newest committed number. */
  head(): Promise<number>;
  /** The keys changed after `after` up to `head`; `complete` false when the log no longer reaches back that far. */
  since(after: number): Promise<{ head: number; keys: string[]; complete: boolean }>;
  /** Calls back on each announced commit, after a reconnect, and now and then: each is a cue to read `since`. */
  subscribe(onAnnounce: () => void): { close(): Promise<void> };
  /** The number of this node's last committed write (the index a write response carries). */
  lastWritten(): number;
}

export interface OpenedStorage {
  physical: Physical;
  /** Set when the configuration enables HA: this node's handle on the cluster's lock. */
  haLock?: (opts: { identity: string; value: string }) => HaLock;
  /** How long the lock stays valid without renewal (`ha_lock_ttl`); the HA timings follow from it. */
  haLockTtlMs?: number;
  /** With HA: the cluster's change feed (standbys follow it). */
  changes?: ChangeFeed;
}

export interface StorageDeps {
  logger: { warn(msg: string, meta?: Record<string, unknown>): void; info(msg: string, meta?: Record<string, unknown>): void };
}

// The schema's output is what open() receives: the config block's keys (HCL names), validated.
export interface StorageBackend<S extends z.ZodObject = z.ZodObject> {
  /** The block's keys, checked at start: an unknown key or a wrong type stops the server, naming it. */
  readonly schema: S;
  /** Whether this configuration makes the node part of an HA cluster (api_addr is then required). */
  haEnabled?(config: z.output<S>): boolean;
  open(config: z.output<S>, deps: StorageDeps): Promise<OpenedStorage>;
}

/** Declares a backend; the registry (registry.ts) names it. */
export const defineStorage = <S extends z.ZodObject>(backend: StorageBackend<S>): StorageBackend<S> => backend;
