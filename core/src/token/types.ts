/**
 * Shapes of the token store and its contract. A TokenEntry never carries the token id itself:
 * only `key`, the HMAC-SHA256 of the id under the barrier's HMAC key, which is
 * also the storage key and the expiration manager's index key.
 */
import type { AuthSpec, Logger, LoginAlias } from '@strongroom/sdk-plugin/host';
import type { TokenLease } from '../expiration/types.js';
import type { Physical, PhysicalOp } from '../storage/physical.js';

export type TokenType = 'service' | 'batch';

/** What a login response (AuthSpec) needs beyond itself to become a token. */
export interface LoginContext {
  /** Uuid of the auth mount that answered the login; its renew handler re-checks renewals. */
  mountUuid?: string;
  /** Request path, e.g. "auth/approle/login". */
  path: string;
  /** Mount path with trailing slash, e.g. "auth/approle/". */
  mountPath: string;
  namespaceId?: string;
  /** The mount's tuned default and max lease TTLs in seconds (0: system). */
  mountDefaultTtl?: number;
  mountMaxTtl?: number;
  /** Mount default token type when the AuthSpec leaves it empty. */
  mountTokenType?: TokenType;
  entityId?: string;
  /** Accessor of the auth mount: with the AuthSpec's alias name it makes the token's login alias. */
  mountAccessor?: string;
}

/** Role token_type: fixed, or a default that the request's `type` may override. */
export type RoleTokenType = 'service' | 'batch' | 'default-service' | 'default-batch';

/** Why an entry is being revoked; persisted so `tidy` can resume a crashed revocation the same way. */
export type PendingRevocation = 'tree' | 'orphan';

export interface TokenEntry {
  /** HMAC-SHA256(hmacKey, id) in hex: storage key and lease index key. */
  readonly key: string;
  /** Random accessor ('' for batch tokens, which have none). */
  readonly accessor: string;
  /** key of the parent token, '' for an orphan. */
  readonly parent: string;
  /** Sorted, deduplicated, lower-case. */
  readonly policies: readonly string[];
  readonly path: string;
  readonly meta: Readonly<Record<string, string>>;
  readonly displayName: string;
  /** 0 unlimited; -1 once the last use was taken or a revocation is pending. */
  readonly numUses: number;
  /** Unix milliseconds. */
  readonly creationTime: number;
  /** Seconds granted at creation. */
  readonly creationTtl: number;
  /** Seconds granted by the last creation or renewal (0: never expires). */
  readonly ttl: number;
  readonly explicitMaxTtl: number;
  readonly period: number;
  /** Backend max TTL applied on renewal (login mount max, 0: system max). */
  readonly maxTtl: number;
  /** Unix milliseconds, 0 when the token never expires. */
  readonly expireTime: number;
  /** Unix milliseconds of the last renewal, 0 if never renewed. */
  readonly lastRenewalTime: number;
  readonly type: TokenType;
  readonly renewable: boolean;
  readonly boundCidrs: readonly string[];
  readonly entityId: string;
  /** 'root' for the root namespace. */
  readonly namespaceId: string;
  /** Token-store role that created it, '' if none. */
  readonly role: string;
  /**
   * The auth mount (uuid) whose login issued this service token, and the
   * login's internal data: renewals are first re-checked by that mount.
   * Absent for tokens not issued by a plugin login.
   */
  readonly login?: { readonly mountUuid: string; readonly internalData: Readonly<Record<string, unknown>> };
  /**
   * The login alias the token's identity rests on: set from an auth mount's
   * login answer and inherited by the tokens it creates, never from a
   * request's `meta` or `display_name` (identity templates trust only this).
   */
  readonly alias?: Readonly<LoginAlias>;
  readonly revokePending?: PendingRevocation;
}

export interface TokenRole {
  name: string;
  allowedPolicies: string[];
  disallowedPolicies: string[];
  allowedPoliciesGlob: string[];
  disallowedPoliciesGlob: string[];
  allowedEntityAliases: string[];
  orphan: boolean;
  renewable: boolean;
  pathSuffix: string;
  tokenType: RoleTokenType;
  tokenBoundCidrs: string[];
  tokenExplicitMaxTtl: number;
  tokenNoDefaultPolicy: boolean;
  tokenNumUses: number;
  tokenPeriod: number;
  /** Seconds; used when the request gives no ttl (0: system default). */
  tokenTtl: number;
  /** Seconds; caps ttl at creation and renewal (0: system max). */
  tokenMaxTtl: number;
}

/** Input of `auth/token/create*`, already validated by schemas.ts (snake_case mapped to camelCase). */
export interface CreateTokenRequest {
  /** Custom token id: root or sudo only (dev `--dev-root-token-id`, migrations). */
  id?: string;
  roleName?: string;
  policies?: string[];
  meta?: Record<string, string>;
  /** Body `no_parent`: needs a root parent or sudo. */
  noParent?: boolean;
  /** The request came through `auth/token/create-orphan`: orphan without sudo (ACL already checked the path). */
  orphanEndpoint?: boolean;
  noDefaultPolicy?: boolean;
  renewable?: boolean;
  /** Seconds. */
  ttl?: number;
  explicitMaxTtl?: number;
  period?: number;
  type?: TokenType;
  displayName?: string;
  numUses?: number;
  entityAlias?: string;
  /** The lead passes whether the caller holds sudo on the request path. */
  callerHasSudo?: boolean;
  /** Namespace the token lives in ('root' when omitted). */
  namespaceId?: string;
}

export interface CreatedToken {
  /** The client token; returned once, never stored. */
  id: string;
  entry: TokenEntry;
  warnings: string[];
}

export interface TokenStoreDeps {
  /** The barrier's secure store: values written here are encrypted by it. */
  store: Pick<Physical, 'get' | 'put' | 'delete' | 'list' | 'batch' | 'scan' | 'scanKeys'>;
  /** Keys token ids and accessors into storage keys (HMAC-SHA256). */
  hmacKey: Buffer;
  /** 32-byte AES-256-GCM key sealing batch tokens. */
  batchKey: Buffer;
  clock?: { now(): number };
  /** Seconds. */
  systemDefaultTtl: number;
  systemMaxTtl: number;
  /**
   * The expiration manager: revokes a token's secret leases, and holds an expiring token's own
   * lease. Null only while init makes the root token (which never expires).
   */
  leases: TokenLeases | null;
  /** The mount a token's creation path falls under (its lease is grouped and reported by it). */
  mountOf?(path: string, namespaceId: string): { path: string; uuid: string } | undefined;
  /** Called as a token is destroyed, before its entry goes (response wrapping drops the wrapped response here). */
  onDestroy?(entry: TokenEntry): Promise<void>;
  /**
   * Asks the auth mount that issued a login token (entry.login) whether it may
   * be renewed; throws to refuse. Without it such tokens renew as any other.
   */
  renewLogin?(entry: TokenEntry, increment: number): Promise<LoginRenewal>;
  logger: Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;
  /** Entries kept decrypted in memory (default 10,000). */
  cacheSize?: number;
}

/** What the token store asks of the expiration manager. */
export interface TokenLeases {
  revokeByToken(tokenKey: string): Promise<unknown>;
  putTokenLease(lease: TokenLease, ops: readonly PhysicalOp[], fresh?: boolean): Promise<void>;
  dropTokenLease(leaseId: string, ops: readonly PhysicalOp[]): Promise<void>;
}

/** An auth mount's answer to a renewal of its login token (seconds; ttl/maxTtl 0: keep the token's). */
export interface LoginRenewal {
  ttl: number;
  maxTtl: number;
  period: number;
  policies: readonly string[];
}

export interface TidyResult {
  revoked: number;
  accessorsRemoved: number;
  parentLinksRemoved: number;
}

export interface TokenStore {
  /** The storage / lease-index key of a token id: HMAC-SHA256 hex. */
  tokenKey(id: string): string;
  /** Key under which a token's leases are indexed: batch tokens use their parent's ('' for an orphan batch token). */
  leaseIndexKey(entry: TokenEntry): string;
  create(parent: TokenEntry | null, req: CreateTokenRequest): Promise<CreatedToken>;
  createRoot(customId?: string): Promise<CreatedToken>;
  createFromLogin(auth: AuthSpec, ctx: LoginContext): Promise<CreatedToken>;
  /**
   * A response-wrapping token: orphan, single use, not renewable, policy
   * `response-wrapping` only, expiring after `ttl` seconds.
   */
  createWrapping(opts: { ttl: number; path: string; namespaceId: string }): Promise<CreatedToken>;
  lookup(id: string): Promise<TokenEntry | null>;
  /** Whether the token with this key (HMAC) exists and is live: for lease tidy, which knows only keys. */
  isLiveKey(key: string): Promise<boolean>;
  lookupByAccessor(accessor: string): Promise<TokenEntry | null>;
  useToken(entry: TokenEntry): Promise<{ entry: TokenEntry; lastUse: boolean } | null>;
  renew(entry: TokenEntry, increment: number): Promise<{ entry: TokenEntry; warnings: string[] }>;
  /** Revokes the token and its whole subtree. False when no such token. */
  revoke(id: string): Promise<boolean>;
  revokeEntry(entry: TokenEntry): Promise<void>;
  revokeAccessor(accessor: string): Promise<boolean>;
  /** Revokes only this token; its children become orphans. */
  revokeOrphan(id: string): Promise<boolean>;
  /** Accessors of the tokens of one namespace (its id is the accessor's suffix). */
  listAccessors(namespaceId?: string): Promise<string[]>;
  /** Revokes every token of a namespace being deleted, with their subtrees; returns how many roots were revoked. */
  revokeNamespace(namespaceId: string): Promise<number>;
  /** Revokes the token of an expiration-manager lease that fell due or was revoked (nothing when it is gone). */
  revokeLeased(tokenKey: string): Promise<void>;
  /** Roles of one namespace (default: root). */
  readRole(name: string, namespaceId?: string): Promise<TokenRole | null>;
  writeRole(name: string, input: Partial<Omit<TokenRole, 'name'>>, namespaceId?: string): Promise<TokenRole>;
  deleteRole(name: string, namespaceId?: string): Promise<void>;
  listRoles(namespaceId?: string): Promise<string[]>;
  tidy(): Promise<TidyResult>;
  checkCidr(entry: TokenEntry, remoteAddr: string): boolean;
  lookupResponse(entry: TokenEntry, id?: string): Record<string, unknown>;
  authBlock(entry: TokenEntry, id: string, identityPolicies?: readonly string[]): Record<string, unknown>;
  roleResponse(role: TokenRole): Record<string, unknown>;
  /** At unseal: finishes the revocations a crash cut short (from the pending index, no scan of the tokens). */
  resumeRevocations(): Promise<void>;
  /** Stored tokens by type and namespace id (a full scan: callers cache it). */
  countTokens(): Promise<Array<{ type: string; namespaceId: string; count: number }>>;
  /** Drops the in-memory cache (after another node wrote storage, e.g. on becoming active). */
  clearCache(): void;
  /** Drops what is cached of one stored key another node changed (a standby following the change feed). */
  invalidate(storageKey: string): void;
}
