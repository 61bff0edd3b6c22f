/**
 * What the HTTP layer hands the core (`ApiRequest`) and what it takes back
 * (`ApiReply`). Everything between the socket and `handle()` lives in
 * core/src/http; routing, tokens, namespaces and ACLs live in the core.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { EventSink } from '../events/hub.js';

/**
 * The operation as far as HTTP can tell. `write` covers POST and PUT: whether
 * it is a create or an update is decided later by the core (existence check).
 */
export type ApiOperation = 'read' | 'list' | 'scan' | 'write' | 'delete' | 'patch';

export interface ApiRequest {
  /** crypto.randomUUID(), also the envelope's `request_id`. */
  id: string;
  /** The HTTP verb as the client sent it ('LIST' for the LIST verb, 'HEAD', 'PUT', ...). */
  method: string;
  operation: ApiOperation;
  /** `help=1` in the query: the core answers help/OpenAPI for the path instead. */
  help: boolean;
  /**
   * Namespace header joined with the URL path: percent-decoded, repeated
   * slashes collapsed, no leading slash, trailing slash kept
   * (`ns1/` + `ns2/secret/foo` -> `ns1/ns2/secret/foo`). The core finds the
   * longest existing namespace prefix in it.
   */
  path: string;
  /** The URL path alone (after `/v1/`, decoded and normalised like `path`). */
  urlPath: string;
  /** From X-Service-Token, X-Vault-Token or `Authorization: Bearer`; undefined when none. */
  token: string | undefined;
  /**
   * Parameters: the JSON body object for write/patch; the query string for
   * read/list/delete (values are strings, repeated keys give arrays). `list`
   * and `help` are not included.
   */
  data: Record<string, unknown>;
  /** The request target as received (`/v1/...?query`), for forwarding to the active node unchanged. */
  url: string;
  /** The request body exactly as received (empty Buffer when none), for forwarding without re-encoding. */
  rawBody: Buffer;
  /** `data` is exactly the value of `rawBody`'s JSON (a write's body, nothing dropped): a plugin can be sent the bytes as they came. */
  dataIsBody?: boolean;
  /** Request headers (lower-case names), e.g. for X-Vault-Wrap-TTL. Includes the token header: never log them whole. */
  headers: IncomingHttpHeaders;
  /** Caller IP, without the `::ffff:` IPv4-mapped prefix. */
  remoteAddress: string;
  /** Set by a listener with `telemetry { unauthenticated_metrics_access = true }`: sys/metrics is served without a token. */
  unauthenticatedMetricsAccess?: boolean;
  /**
   * A streamed upload (the listener's `streamedUpload` paths: a snapshot restore): the body,
   * unread and not bound by max_request_size, for the handler to consume; `rawBody` is then empty.
   */
  bodyStream?: AsyncIterable<Uint8Array>;
}

/** A raw (non-JSON) body, e.g. an SSH public key as text/plain. */
export interface RawBody {
  raw: Buffer | string;
  contentType: string;
}

/** A body streamed to the client as it is produced (chunked), never held whole: a snapshot. */
export interface StreamBody {
  stream: AsyncIterable<Uint8Array>;
  contentType: string;
}

export interface ApiReply {
  status: number;
  /** JSON-serialised unless it is a RawBody or a StreamBody. Ignored for 204 and HEAD. */
  body?: unknown;
  headers?: Record<string, string>;
  /**
   * A streamed answer (sys/events/subscribe): the listener answers 200 with
   * server-sent events, or completes a WebSocket upgrade, and hands the
   * transport over; `body` is then ignored.
   */
  eventStream?: ReplyStream;
}

export interface ReplyStream {
  /** `lastEventId`: the client's Last-Event-ID header, to resume after. */
  open(sink: EventSink, opts: { lastEventId: string | undefined }): void;
}

/** The core's entry point. It may throw; errors are mapped with `httpStatusFor`. */
export type ApiHandler = (req: ApiRequest) => Promise<ApiReply>;
