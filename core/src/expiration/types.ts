/**
 * The expiration manager's contract: what it is given, what it answers. One service for every
 * lease: secrets an engine handed out, and service tokens' expiry (see lease-entry.ts).
 */
import type { Logger, MountTtls } from '@strongroom/sdk-plugin/host';
import type { SecretSpec, Clock } from '@strongroom/sdk-plugin/host';
import type { PhysicalOp } from '../storage/physical.js';
import type { KeyValueStore } from '../storage/keys.js';
import type { LeaseEntry, LeaseLookup, TokenLeaseFields } from './lease-entry.js';

/** A service token's lease, as the token store describes it (times in ms, TTL in seconds; mountPath/mountUuid: the mount its path falls under). */
export type TokenLease = TokenLeaseFields;

/** What the core does with the owning plugin (HandleRequest with operation revoke or renew). */
export interface Revoker {
  /** Must enforce its own deadline. Throw StrongroomError (user-safe, scrubbed message); `retryable` decides retries. */
  revokeSecret(lease: LeaseEntry): Promise<void>;
  renewSecret(lease: LeaseEntry, increment: number): Promise<RenewSecretResult>;
}

export interface RenewSecretResult {
  /** Seconds the engine grants (0: the increment, else the mount default); capped here by max TTL. */
  ttl: number;
  /** false when the engine says the secret can no longer be renewed. */
  renewable?: boolean;
  data?: Record<string, unknown>;
  warnings?: string[];
}

export interface ExpirationOptions {
  /** Revocations in flight overall. */
  maxInFlight: number;
  /** Revocations in flight for one mount (keep below maxInFlight so a hung mount leaves room). */
  maxInFlightPerMount: number;
  /** First retry delay; doubles per failure, with +-50 % jitter. */
  retryBaseMs: number;
  /** Failures after which a lease becomes irrevocable. */
  maxRevokeAttempts: number;
  /** How often an irrevocable lease is tried again. */
  irrevocableRetryMs: number;
  /** Seconds; used when a mount reports no max TTL (Vault's 32 days). */
  fallbackMaxTtl: number;
  /** Restore yields to the event loop after this many leases, so requests are served meanwhile. */
  restoreYieldEvery: number;
  random: () => number;
}

export interface ExpirationDeps {
  /** The barrier's store (values encrypted by it); the manager writes under sys/expire/ and sys/expire-token/. */
  store: KeyValueStore;
  revoker: Revoker;
  logger: Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;
  /** The mount's default and max lease TTL in seconds, already defaulted to and capped by the system's. */
  mountTtls(mountUuid: string): MountTtls;
  /** Whether the token behind this key (an HMAC of the token) still exists and is unexpired; used by tidy. */
  tokenExists(tokenKey: string): Promise<boolean>;
  /** Revokes the token (and its tree) whose lease fell due or was revoked: the token store. */
  revokeToken?(tokenKey: string): Promise<void>;
  /** For include_child_namespaces: is `candidateId` below `ancestorId`? Without it only exact matches count. */
  isDescendantNamespace?(ancestorId: string, candidateId: string): boolean;
  clock?: Clock;
  options?: Partial<ExpirationOptions>;
  /**
   * Lease events for metrics, quotas and change events, by mount path: each secret lease issued,
   * each successful revocation (`expired`: the lease ran out its TTL; `token`: a token's lease) and
   * each lease that turns irrevocable; namespaceId is '' for the root namespace.
   */
  events?: {
    issued?(leaseId: string, mountPath: string, namespaceId: string, ttl: number): void;
    revoked?(mountPath: string, expired: boolean, namespaceId: string, lease: { leaseId: string; token: boolean }): void;
    irrevocable?(mountPath: string, namespaceId: string): void;
    /** The manager holds a lease from now on (registered, a token's, restored) or no longer (gone): lease-count quotas. */
    held?(leaseId: string, mount: { mountPath: string; namespaceId: string; role?: string }): void;
    dropped?(leaseId: string, mount: { mountPath: string; namespaceId: string }): void;
  };
  /**
   * The login role a lease-count quota counts this lease under, stored with it so that restore
   * counts it under the same rule: the role it already has, or the current request's reservation's.
   */
  quotaRole?(leaseId: string): string | undefined;
  /** How often restore and tidy log their progress; default 5 s. */
  progressEveryMs?: number;
}

export interface RegisterInput {
  /** Mount path relative to its namespace, with trailing slash ("database/"). */
  mountPath: string;
  mountUuid: string;
  /** '' (or 'root') for the root namespace. */
  namespaceId: string;
  /** Request path relative to the mount ("creds/readonly"). */
  requestPath: string;
  secret: SecretSpec;
  /** HMAC of the requesting token ('' when the lease is tied to no token). */
  tokenKey: string;
}

export interface RegisteredLease {
  leaseId: string;
  /** Seconds, after capping. */
  ttl: number;
  renewable: boolean;
  issueTime: number;
  expireTime: number;
  warnings: string[];
}

export interface RenewedLease {
  leaseId: string;
  renewable: boolean;
  /** Seconds. */
  leaseDuration: number;
  data?: Record<string, unknown>;
  warnings: string[];
}

export interface IrrevocableQuery {
  /** '' for root. */
  namespaceId: string;
  includeChildNamespaces: boolean;
}

export interface IrrevocableLease {
  lease_id: string;
  mount_id: string;
  mount_path: string;
  namespace_id: string;
  expire_time: string;
  error: string;
}

export interface IrrevocableList {
  leaseCount: number;
  leases: IrrevocableLease[];
  warnings: string[];
}

export interface IrrevocableCount {
  leaseCount: number;
  /** Per mount uuid. */
  counts: Record<string, number>;
}

export interface RestoreResult {
  loaded: number;
  /** Already known (registered, renewed or revoked while the restore ran). */
  skipped: number;
  /** Corrupt entries logged and left in storage (revoke-force removes them). */
  corrupt: number;
  /** True when a storage error stopped the scan early; calling restore() again resumes safely. */
  failed: boolean;
  durationMs: number;
}

export interface TidyResult {
  scanned: number;
  revoked: number;
  indexEntriesRemoved: number;
  /** Leases whose due-index key was missing or stale, repaired. */
  dueKeysRepaired: number;
}

export interface ExpirationStats {
  leases: number;
  /** Leases waiting on the timer (not queued, not being revoked). */
  scheduled: number;
  queuedRevocations: number;
  inFlightRevocations: number;
  irrevocable: number;
  restoring: boolean;
  revoked: number;
  revokeFailures: number;
}

export interface ExpirationManager {
  register(input: RegisterInput): Promise<RegisteredLease>;
  lookup(leaseId: string): Promise<LeaseLookup>;
  /** One level of lease ids below `prefix` in a namespace ("" lists the mounts), for LIST sys/leases/lookup/:prefix. */
  listPrefix(namespaceId: string, prefix: string): Promise<string[]>;
  renew(leaseId: string, increment: number): Promise<RenewedLease>;
  /** sync: revoke now and throw the backend's error; otherwise queue (persisted) and return. */
  revoke(leaseId: string, opts?: { sync?: boolean }): Promise<void>;
  /** revoke-prefix (force false) and revoke-force (force true: ignores backend errors, removes entries; always sync). Returns the count. */
  revokePrefix(namespaceId: string, prefix: string, opts?: { sync?: boolean; force?: boolean }): Promise<number>;
  /** All leases of a token: queued unless sync. Returns the count. */
  revokeByToken(tokenKey: string, opts?: { sync?: boolean }): Promise<number>;
  /**
   * Stores (or moves) a token's lease, with the token store's own writes `ops` in the same atomic
   * batch, and schedules its expiry. Takes no lease lock: the token store calls it under the
   * token's lock, which also guards every other write of this lease but the manager's own.
   * `fresh`: the lease of a token just made with a generated id, which no due-index key can name
   * yet (no scan for stale ones: a login's one storage iterator).
   */
  putTokenLease(lease: TokenLease, ops: readonly PhysicalOp[], fresh?: boolean): Promise<void>;
  /** Removes a token's lease with the token store's writes `ops`, in one batch (no lease lock, as above). */
  dropTokenLease(leaseId: string, ops: readonly PhysicalOp[]): Promise<void>;
  tidy(): Promise<TidyResult>;
  /** sys/leases?type=irrevocable: at most `limit` leases (default 10000) with a warning when more exist; 'none' lists all. */
  irrevocable(query: IrrevocableQuery & { limit?: number | 'none' }): IrrevocableList;
  countIrrevocable(query: IrrevocableQuery): IrrevocableCount;
  /** Background restore after unseal: streams the store, never holds lease bodies. */
  restore(): Promise<RestoreResult>;
  /** On seal: stops timers and queues and drops memory. Terminal: make a new manager on unseal. */
  stop(): void;
  stats(): ExpirationStats;
  /** Leases held per mount, each mount named by its path and its namespace id ('' for root), for the leases gauge. */
  countByMount(): Array<{ mountPath: string; namespaceId: string; count: number }>;
  /** Every lease held in memory, with its mount path and namespace id ('' for root). */
  eachLease(fn: (leaseId: string, mount: { mountPath: string; namespaceId: string }) => void): void;
  /** Resolves when the first restore since this manager was made has finished (at once if it already has). */
  restored(): Promise<void>;
  /**
   * Resolves once no revocation is queued or in flight and no restore or lease operation runs
   * (tests, graceful shutdown). A due entry whose timer has not fired yet does not count.
   */
  whenIdle(): Promise<void>;
}
