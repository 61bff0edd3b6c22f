/**
 * The storage backends a server can be configured with, by the name its
 * `storage "<name>"` block uses. The config loader validates a block with the
 * backend's schema, the server opens it with its factory, and seal-status
 * reports the name: a new backend is its module and one entry here.
 */
import { z } from 'zod';
import { durationMs, lenientBool, lenientInt, nonEmpty } from '../hcl/values.js';
import { defineStorage, type OpenedStorage, type StorageBackend, type StorageDeps } from './backend.js';
import { createInmemPhysical } from './inmem.js';
import { createLevelPhysical } from './level.js';
import { createPostgresChangeFeed } from './postgres-changes.js';
import { createPostgresLock } from './postgres-lock.js';
import { createPostgresPhysical } from './postgresql.js';

const sqlIdentifier = z
  .string({ message: 'must be a string' })
  .regex(/^([A-Za-z_][A-Za-z0-9_]{0,62}\.)?[A-Za-z_][A-Za-z0-9_]{0,62}$/, 'must be a SQL identifier (letters, digits, _), optionally schema-qualified');

/** `ha_lock_ttl` when the block sets none. */
const DEFAULT_HA_LOCK_TTL_MS = 5_000;

const REGISTRY = {
  /** LevelDB in a local directory: the default, one node. */
  level: defineStorage({
    schema: z.object({ path: nonEmpty }),
    open: async (c, deps) => ({ physical: await createLevelPhysical({ path: c.path, logger: deps.logger }) }),
  }),
  /**
   * Vault's `storage "file"`, so a config copied from Vault starts: the same
   * embedded LevelDB store at that path, in our format, not Vault's file layout
   * (neither server reads the other's directory), and the log says so.
   */
  file: defineStorage({
    schema: z.object({ path: nonEmpty }),
    open: async (c, deps) => {
      deps.logger.warn(`storage file (from a Vault config) is served by Strongroom's embedded LevelDB store at ${c.path}: its own format, not Vault's file layout; a Vault data directory is not read and a Vault server cannot read this one`);
      return { physical: await createLevelPhysical({ path: c.path, logger: deps.logger }) };
    },
  }),
  /** Memory only, gone at exit: tests. */
  inmem: defineStorage({
    schema: z.object({}),
    open: async () => ({ physical: createInmemPhysical() }),
  }),
  /** PostgreSQL (tables created when missing); with `ha_enabled`, nodes share it, one active. */
  postgresql: defineStorage({
    schema: z.object({
      connection_url: nonEmpty,
      ha_enabled: lenientBool.optional(),
      table: sqlIdentifier.optional(),
      ha_table: sqlIdentifier.optional(),
      max_parallel: lenientInt.refine((n) => n >= 1 && n <= 1000, 'must be between 1 and 1000').optional(),
      /** How long the HA lock stays valid without renewal: a standby takes over this long after the active node died at most. */
      ha_lock_ttl: durationMs.refine((ms) => ms >= 1000 && ms <= 300_000, 'must be between 1s and 5m').optional(),
    }),
    haEnabled: (c) => c.ha_enabled ?? false,
    open: async (c, deps) => {
      const physical = createPostgresPhysical({
        connectionUrl: c.connection_url,
        logger: deps.logger,
        ...(c.table !== undefined ? { table: c.table } : {}),
        ...(c.ha_table !== undefined ? { haTable: c.ha_table } : {}),
        ...(c.max_parallel !== undefined ? { maxParallel: c.max_parallel } : {}),
        ...(c.ha_enabled ? { ha: true } : {}),
      });
      if (!c.ha_enabled) return { physical };
      const ttlMs = c.ha_lock_ttl ?? DEFAULT_HA_LOCK_TTL_MS;
      return { physical, haLockTtlMs: ttlMs, haLock: (lock) => createPostgresLock({ physical, ...lock, ttlMs }), changes: createPostgresChangeFeed(physical, deps.logger) };
    },
  }),
};

type Registry = typeof REGISTRY;
type ConfigOf<B> = B extends StorageBackend<infer S> ? z.output<S> : never;

/** A storage block, validated: the backend's name and its keys (HCL names). */
export type StorageConfig = { [N in keyof Registry]: { type: N; config: ConfigOf<Registry[N]> } }[keyof Registry];

export const STORAGE_BACKENDS = Object.keys(REGISTRY) as ReadonlyArray<keyof Registry>;

const backendOf = (type: string): StorageBackend | undefined => (Object.hasOwn(REGISTRY, type) ? (REGISTRY[type as keyof Registry] as unknown as StorageBackend) : undefined);

/** The schema of a `storage "<type>"` block, or undefined for a type no backend has. */
export function storageSchema(type: string): z.ZodObject | undefined {
  return backendOf(type)?.schema;
}

export function storageHaEnabled(storage: StorageConfig): boolean {
  return backendOf(storage.type)?.haEnabled?.(storage.config) ?? false;
}

export function openStorage(storage: StorageConfig, deps: StorageDeps): Promise<OpenedStorage> {
  const backend = backendOf(storage.type);
  if (!backend) throw new Error(`unsupported storage type "${storage.type}"`);
  return backend.open(storage.config, deps);
}
