/**
 * Replies: Vault's response envelope, `{errors: [...]}` error bodies, and the
 * one function that writes an ApiReply to the socket.
 *
 * What must stay true: an error that is not a StrongroomError never shows its
 * text to the client (it may carry internals such as a connection string); the
 * client gets 'internal error' and the detail goes to the log with the request
 * id. Every reply carries `Cache-Control: no-store` (bodies hold secrets).
 */
import type { ServerResponse } from 'node:http';
import { StrongroomError, httpStatusFor, type Logger } from '@strongroom/sdk-plugin/host';
import type { ApiReply, RawBody } from './types.js';

/** The JSON shape of a successful Vault response. */
export interface Envelope {
  request_id: string;
  lease_id: string;
  renewable: boolean;
  lease_duration: number;
  data: unknown;
  wrap_info: unknown;
  warnings: string[] | null;
  auth: unknown;
  mount_type: string;
}

export interface EnvelopeInput {
  requestId: string;
  leaseId?: string;
  renewable?: boolean;
  /** Seconds. */
  leaseDuration?: number;
  data?: unknown;
  wrapInfo?: unknown;
  /** An empty list is sent as null, as Vault does. */
  warnings?: string[] | null;
  auth?: unknown;
  mountType?: string;
}

export function envelope(input: EnvelopeInput): Envelope {
  return {
    request_id: input.requestId,
    lease_id: input.leaseId ?? '',
    renewable: input.renewable ?? false,
    lease_duration: input.leaseDuration ?? 0,
    data: input.data ?? null,
    wrap_info: input.wrapInfo ?? null,
    warnings: input.warnings && input.warnings.length > 0 ? input.warnings : null,
    auth: input.auth ?? null,
    mount_type: input.mountType ?? '',
  };
}

/** `{errors: [...]}` with the given status (every status >= 400 has this body). */
export function errorReply(status: number, messages: string[]): ApiReply {
  return { status, body: { errors: messages } };
}

/** Maps anything thrown by the core to a reply. Only StrongroomError text reaches the client. */
export function replyForError(err: unknown, log: Pick<Logger, 'error'>, requestId: string): ApiReply {
  if (err instanceof StrongroomError) {
    return errorReply(httpStatusFor(err), [err.message, ...err.details]);
  }
  log.error('request failed', {
    requestId,
    error: err instanceof Error ? (err.stack ?? err.message) : String(err),
  });
  return errorReply(500, ['internal error']);
}

function isRawBody(body: unknown): body is RawBody {
  return (
    typeof body === 'object' &&
    body !== null &&
    'raw' in body &&
    'contentType' in body &&
    typeof (body as RawBody).contentType === 'string' &&
    (typeof (body as RawBody).raw === 'string' || Buffer.isBuffer((body as RawBody).raw))
  );
}

const JSON_TYPE = 'application/json';

/**
 * Serialises a reply to bytes and headers without writing anything, so a
 * serialisation failure (a cycle, a BigInt) can still become a 500.
 */
export function renderReply(reply: ApiReply, head: boolean): { status: number; headers: Record<string, string | number>; body: Buffer | null } {
  const headers: Record<string, string | number> = { 'Cache-Control': 'no-store' };
  if (reply.headers) Object.assign(headers, reply.headers);
  const status = reply.status;
  if (status === 204 || status === 304 || reply.body === undefined) {
    if (status !== 204 && status !== 304) headers['Content-Length'] = 0;
    return { status, headers, body: null };
  }
  let body: Buffer;
  if (isRawBody(reply.body)) {
    headers['Content-Type'] = reply.body.contentType;
    body = typeof reply.body.raw === 'string' ? Buffer.from(reply.body.raw, 'utf8') : reply.body.raw;
  } else {
    headers['Content-Type'] = JSON_TYPE;
    body = Buffer.from(JSON.stringify(reply.body), 'utf8');
  }
  headers['Content-Length'] = body.length;
  return { status, headers, body: head ? null : body };
}

/** Writes a rendered reply directly (no express response helpers on the hot path). */
export function writeRendered(res: ServerResponse, rendered: ReturnType<typeof renderReply>): void {
  res.writeHead(rendered.status, rendered.headers);
  if (rendered.body) res.end(rendered.body);
  else res.end();
}
