/**
 * The narrow interfaces the request pipeline needs from the rest of the core.
 * Each is implemented by an adapter in core/src/server/core.ts, so the
 * pipeline can be tested with fakes of exactly what it uses.
 */
import type { AuthSpec, LogicalRequest, SecretSpec } from '@strongroom/sdk-plugin/host';
import type { MountEntry } from '../mounts/mount-table.js';
import type { Namespace } from '../namespace/namespaces.js';

/** What the pipeline needs of a token (a projection of the token store's entry). */
export interface CallerToken {
  /** The token id itself (never logged; audit HMACs it). */
  id: string;
  accessor: string;
  policies: string[];
  displayName: string;
  entityId: string;
  metadata: Record<string, string>;
  namespaceId: string;
  type: 'service' | 'batch';
  ttl: number;
  /** Remaining uses (0 = unlimited). */
  numUses: number;
  boundCidrs: string[];
  /** HMAC of the id: the key under which leases are indexed. */
  key: string;
  isRoot: boolean;
  /** The token store's entry as looked up before this request used the token (opaque to the pipeline). */
  entry: unknown;
}

/**
 * A logical request as the core's in-process backends (sys/, auth/token/) see
 * it: with the caller's token entry as this request's use left it (on its last
 * use the entry is already marked for revocation, yet the request still gets
 * it, so a token on its last use can look itself up).
 */
export type InProcessRequest = LogicalRequest & {
  callerEntry?: unknown;
  /** The request's wrap TTL in seconds (sys/wrapping/wrap uses it as the wrapping token's TTL). */
  wrapTtl?: number;
};

/** Response wrapping as the pipeline needs it (core/src/wrapping/response-wrapping.ts). */
export interface WrappingPort {
  wrap(
    response: Record<string, unknown>,
    opts: { ttl: number; path: string; namespaceId: string; wrappedAccessor?: string },
  ): Promise<{ token: string; accessor: string; ttl: number; creation_time: string; creation_path: string; wrapped_accessor?: string }>;
}

export interface TokenPort {
  lookup(id: string): Promise<CallerToken | null>;
  /** Consume one use; `exhausted` when that was the last (revoke after the request); `entry` is the token entry after the use. */
  use(t: CallerToken): Promise<{ exhausted: boolean; entry: unknown }>;
  revokeExhausted(t: CallerToken): Promise<void>;
  cidrAllowed(t: CallerToken, remoteAddress: string): boolean;
  /** Turns a login's auth block into a token; returns the envelope's `auth`. */
  createFromAuth(auth: AuthSpec, ctx: { mount: MountEntry; namespace: Namespace; path: string; remoteAddress: string }): Promise<Record<string, unknown>>;
}

export type AclOperation = 'create' | 'read' | 'update' | 'patch' | 'delete' | 'list';

export interface AclDecision {
  allowed: boolean;
  /** The token has sudo on this path. */
  sudo: boolean;
}

export interface AclPort {
  check(t: CallerToken, namespace: Namespace, op: AclOperation, path: string, data: Record<string, unknown>): Promise<AclDecision>;
}

export interface LeasePort {
  /** Registers a secret as a lease; returns the lease id and the capped TTL. */
  register(args: {
    mount: MountEntry;
    namespace: Namespace;
    requestPath: string;
    secret: SecretSpec;
    token: CallerToken | null;
  }): Promise<{ leaseId: string; ttl: number; renewable: boolean }>;
}

export interface AuditPort {
  readonly enabled: boolean;
  logRequest(e: import('../audit/broker.js').AuditEntry): Promise<void>;
  logResponse(e: import('../audit/broker.js').AuditEntry): Promise<void>;
}

export type { LogicalRequest };
