/**
 * The narrow interfaces the request pipeline needs from the rest of the core.
 * Tokens and the ACL are adapted in token-port.ts and access.ts; the
 * expiration manager, audit broker and response wrapping serve as they are.
 * The pipeline is tested with fakes of exactly what it uses.
 */
import { badRequest, type AuthSpec, type LogicalRequest, type LogicalResponse } from '@strongroom/sdk-plugin/host';
import type { RegisterInput } from '../expiration/index.js';
import type { ReplyStream, StreamBody } from '../http/types.js';
import type { MountEntry } from '../mounts/mount-table.js';
import type { Namespace } from '../namespace/namespaces.js';
import type { QuotaManager } from '../quotas/quota-manager.js';
import type { TokenEntry } from '../token/index.js';

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
  /** The token store's entry as looked up before this request used the token. */
  entry: TokenEntry;
}

/**
 * A logical request as the core's in-process backends (sys/, auth/token/) see
 * it: with the caller's token entry as this request's use left it (on its last
 * use the entry is already marked for revocation, yet the request still gets
 * it, so a token on its last use can look itself up).
 */
export type InProcessRequest = LogicalRequest & {
  callerEntry?: TokenEntry;
  /** The caller's ACL grants `sudo` on this request's path (auth/token/create honours it, as Vault does). */
  callerSudo?: boolean;
  /** The request's wrap TTL in seconds (sys/wrapping/wrap uses it as the wrapping token's TTL). */
  wrapTtl?: number;
  /** The body, unread, of a streamed upload (sys/storage/snapshot-restore): see ApiRequest.bodyStream. */
  bodyStream?: AsyncIterable<Uint8Array>;
};

/**
 * What an in-process backend may answer beyond a plugin's: a body streamed to the client
 * (sys/storage/snapshot), or a stream of events the listener carries as SSE or WebSocket
 * frames (sys/events/subscribe).
 */
export type InProcessResponse = LogicalResponse & {
  stream?: StreamBody;
  eventStream?: ReplyStream;
};


/** Response wrapping as the pipeline needs it (core/src/wrapping/response-wrapping.ts). */
/**
 * Vault's answer to a wrapping token that is spent, expired or not one (clients match the
 * text): the wrapping service's, and the pipeline's for such a token sent in the header.
 */
export const invalidWrappingToken = () => badRequest('wrapping token is not valid or does not exist');

export interface WrappingPort {
  /** The wrap TTL header in seconds (null when absent); a 400 when malformed or out of bounds. */
  parseTtl(header: string | undefined): number | null;
  wrap(
    response: Record<string, unknown>,
    opts: { ttl: number; path: string; namespaceId: string; wrappedAccessor?: string },
  ): Promise<{ token: string; accessor: string; ttl: number; creation_time: string; creation_path: string; wrapped_accessor?: string }>;
}

export interface TokenPort {
  lookup(id: string): Promise<CallerToken | null>;
  /** Consume one use; `exhausted` when that was the last (revoke after the request); `entry` is the token entry after the use. */
  use(t: CallerToken): Promise<{ exhausted: boolean; entry: TokenEntry }>;
  revokeExhausted(t: CallerToken): Promise<void>;
  cidrAllowed(t: CallerToken, remoteAddress: string): boolean;
  /** Turns a login's auth block into a token; returns the envelope's `auth`. */
  createFromAuth(auth: AuthSpec, ctx: { mount: MountEntry; namespace: Namespace; path: string; remoteAddress: string }): Promise<Record<string, unknown>>;
}

export type AclOperation = 'create' | 'read' | 'update' | 'patch' | 'delete' | 'list' | 'scan';

export interface AclDecision {
  allowed: boolean;
  /** The token has sudo on this path. */
  sudo: boolean;
  /** Seconds: the bounds the policies set on the request's wrap TTL (a minimum makes wrapping mandatory). */
  minWrappingTtl?: number;
  maxWrappingTtl?: number;
}

export interface AclPort {
  check(t: CallerToken, namespace: Namespace, op: AclOperation, path: string, data: Record<string, unknown>): Promise<AclDecision>;
  /** For each path (as the token's namespace sees it): whether the token may `read` or `list` it (what a scan shows). */
  readable(t: CallerToken, namespace: Namespace, paths: readonly string[]): Promise<boolean[]>;
}

/** Registers a secret as a lease; answers the lease id and the capped TTL (the expiration manager). */
export interface LeasePort {
  register(input: RegisterInput): Promise<{ leaseId: string; ttl: number; renewable: boolean }>;
}

/** Resource quotas as the pipeline applies them (core/src/quotas). */
export type QuotaPort = Pick<QuotaManager, 'rateLimit' | 'reserveLease' | 'wantsRole'>;

export interface AuditPort {
  readonly enabled: boolean;
  logRequest(e: import('../audit/broker.js').AuditEntry): Promise<void>;
  logResponse(e: import('../audit/broker.js').AuditEntry): Promise<void>;
}

export type { LogicalRequest };
