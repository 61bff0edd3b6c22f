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

export interface OpenedStorage {
  physical: Physical;
  /** Set when the configuration enables HA: this node's handle on the cluster's lock. */
  haLock?: (opts: { identity: string; value: string; ttlMs: number }) => HaLock;
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
