/**
 * The logical request and response an engine sees. An engine knows nothing of
 * HTTP, tokens or ACLs: the core turns an HTTP call into a LogicalRequest
 * (path relative to the mount) and the engine's LogicalResponse back into the
 * HTTP envelope. These shapes cross the process boundary (proto/backend.proto),
 * so every field must survive JSON encoding.
 */

export type Operation =
  | 'read'
  | 'list'
  | 'scan'
  | 'create'
  | 'update'
  | 'patch'
  | 'delete'
  | 'renew'
  | 'revoke'
  | 'help'
  /** Vault's ResolveRoleOperation: which role a login request would log in with (`data.role`), for role-based quotas; nothing is logged in. */
  | 'resolve-role';

/** Operations a path can declare handlers for (renew/revoke belong to secret types). */
export type PathOperation = 'read' | 'list' | 'scan' | 'create' | 'update' | 'patch' | 'delete';

export interface ClientInfo {
  /** Remote IP address of the caller (after any trusted proxy handling). */
  remoteAddress: string;
  /** Display name of the token (e.g. "approle", "token", "root"). */
  displayName: string;
  /** Accessor of the calling token; empty for unauthenticated paths. */
  tokenAccessor: string;
  /** Entity id of the caller, when the token has one. */
  entityId: string;
  /** Policies of the calling token. */
  policies: string[];
  /**
   * Metadata of the calling token (e.g. approle role_name). Whoever creates a
   * token through auth/token/create chooses it: never an identity to trust.
   */
  metadata: Record<string, string>;
  /** The login the caller's identity rests on, when its token came from one (or from a child of one). */
  alias?: LoginAlias;
}

/**
 * What an auth method's login established about a caller, kept by the core
 * with the token (and its children) and never taken from the caller: identity
 * templates (`{{identity.entity.aliases.<accessor>.name}}`) read only this.
 */
export interface LoginAlias {
  /** Accessor of the auth mount whose login issued the token ("approle_1a2b3c4d"). */
  mountAccessor: string;
  /** The login's alias name (approle: the role's role_id). */
  name: string;
  /** The login's metadata as the auth method answered it (approle: role_name and the SecretID's metadata). */
  metadata: Record<string, string>;
}

export interface MountInfo {
  /** Mount path including the trailing slash, relative to its namespace ("transit/"). */
  path: string;
  /** Mount type ("kv", "transit", "approle"). */
  type: string;
  /** Stable id of the mount; its storage lives under logical/<uuid>/ or auth/<uuid>/. */
  uuid: string;
  /** Accessor of the mount ("transit_1a2b3c4d"). */
  accessor: string;
  /** Namespace path ("" for the root namespace, "ns1/ns2/" otherwise). */
  namespace: string;
  /** Mount options (kv: {version: "2"}). */
  options: Record<string, string>;
  /** Whether this is an auth mount (auth/...) rather than a secrets mount. */
  isAuth: boolean;
}

/** The internal state of an issued secret, handed back on renew and revoke. */
export interface SecretRef {
  leaseId: string;
  /** Name of the secret type that issued it (matches a declared secret type). */
  secretType: string;
  /** Engine-private data stored with the lease (never shown to clients). */
  internalData: Record<string, unknown>;
  /** Seconds the lease was issued for / last renewed for. */
  ttl: number;
  /** Increment requested on renew, in seconds (0: the engine's default). */
  increment: number;
  /** Unix milliseconds. */
  issueTime: number;
  lastRenewalTime: number | null;
}

/** A login token being renewed: what the login's AuthSpec put on it. */
export interface RequestAuth {
  /** The login's `internalData` (never shown to clients). */
  internalData: Record<string, unknown>;
  metadata: Record<string, string>;
  /** The token's policies; an auth method that answers different ones refuses the renewal. */
  policies: string[];
}

export interface LogicalRequest {
  /** Request id, also in logs and audit entries. */
  id: string;
  operation: Operation;
  /** Path relative to the mount, no leading slash ("keys/foo"). */
  path: string;
  mount: MountInfo;
  /**
   * Body (writes) or query parameters (reads, lists). Lists and scans also carry `after` and
   * `limit`. A scan (OpenBao's SCAN) answers every key below the path, relative, at any depth.
   */
  data: Record<string, unknown>;
  client: ClientInfo;
  /** Set on operations renew and revoke of a secret. */
  secret?: SecretRef;
  /** Set on renew of a token issued by this auth mount's login. */
  auth?: RequestAuth;
  /** A few selected request headers, lower-cased names (only those the mount allows). */
  headers?: Record<string, string>;
  /**
   * The caller's token. Set only for the core's own in-process backends
   * (sys/, auth/token/), which need it for lookup-self and the like; it never
   * crosses to a plugin process (the codec does not carry it).
   */
  clientToken?: string;
  /**
   * A write sent as `update` whose create-or-update is left to the backend: it
   * runs its own existence check and handles the request as the answer says
   * (writeOperation() below), so the handler still sees `create` or `update`.
   * The core sets it only when the caller's ACL decides create and update
   * alike, where the answer cannot change the authorisation; it saves the
   * round trip of asking first (issue 20).
   */
  resolveExistence?: boolean;
  /**
   * The JSON text `data` was parsed from, when `data` is exactly that text's value (the core
   * sets it for a request body it did not change): sent to a plugin as it is rather than
   * serialised again, so a large body is not copied twice more on its way (issue 31). Whoever
   * changes `data` must drop it; it never arrives on the plugin side.
   */
  dataJson?: Uint8Array;
}

/** A secret (lease-bearing) part of a response. The core turns it into a lease. */
export interface SecretSpec {
  /** Secret type name, declared by the engine; used to route renew/revoke. */
  type: string;
  /** Requested TTL in seconds (0: mount default); the core caps it. */
  ttl: number;
  /** Maximum TTL in seconds across renewals (0: mount max). */
  maxTtl: number;
  renewable: boolean;
  internalData: Record<string, unknown>;
}

/** An auth block returned by a login path; the core creates the token. */
export interface AuthSpec {
  displayName: string;
  policies: string[];
  /** Policies from identity; kept separate as Vault does. */
  identityPolicies?: string[];
  noDefaultPolicy: boolean;
  metadata: Record<string, string>;
  internalData: Record<string, unknown>;
  /** Seconds. */
  ttl: number;
  maxTtl: number;
  explicitMaxTtl: number;
  period: number;
  numUses: number;
  renewable: boolean;
  boundCidrs: string[];
  /** "service" | "batch" | "" (mount default). */
  tokenType: string;
  /** A stable alias for the login (e.g. role id) for identity. */
  aliasName?: string;
}

/** A raw HTTP reply for endpoints that are not JSON (e.g. a public key as text/plain). */
export interface RawHttpResponse {
  status: number;
  contentType: string;
  /** Body, base64-encoded when `base64` is true, else UTF-8 text. */
  body: string;
  base64?: boolean;
}

export interface LogicalResponse {
  data?: Record<string, unknown> | null;
  secret?: SecretSpec;
  auth?: AuthSpec;
  warnings?: string[];
  redirect?: string;
  raw?: RawHttpResponse;
  /**
   * An already-rendered envelope `auth` block. Only the core's in-process
   * token backend sets it (token create and renew); plugins return `auth`.
   */
  renderedAuth?: Record<string, unknown>;
  /**
   * An already-made `wrap_info` (sys/wrapping/wrap and rewrap, core's
   * in-process system backend only): the envelope answers it and nothing else.
   */
  wrapInfo?: Record<string, unknown>;
  /** Envelope lease fields for sys/leases/renew (core's in-process system backend only). */
  renewedLease?: { leaseId: string; leaseDuration: number; renewable: boolean };
  /**
   * HTTP status to use for a successful non-empty response (e.g. 207 or 400
   * for a batch with failures, per partial_failure_response_code).
   */
  status?: number;
}

export interface ExistenceResult {
  /** True when the path declares an existence check. */
  checkFound: boolean;
  exists: boolean;
}

/** The operation a write is, given its existence check: `create` only when a declared check found nothing (as in Vault). */
export function writeOperation(ex: ExistenceResult): 'create' | 'update' {
  return ex.checkFound && !ex.exists ? 'create' : 'update';
}

export interface SpecialPaths {
  /** Patterns reachable without a token ("login", "role/+/secret-id/*" style globs). */
  unauthenticated: string[];
  /** Patterns that need sudo. */
  root: string[];
}
