/**
 * Shapes of the token store. A TokenEntry never carries the token id itself:
 * only `key`, the HMAC-SHA256 of the id under the barrier's HMAC key, which is
 * also the storage key and the expiration manager's index key.
 */
import type { LoginAlias } from '@strongroom/sdk-plugin/host';

export type TokenType = 'service' | 'batch';

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
