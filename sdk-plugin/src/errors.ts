/**
 * One catalog of typed errors. An engine throws these; they cross the wire as
 * (code, message, status); the core maps them to HTTP in exactly one place
 * (`httpStatusFor`). The message is user-safe: it ends up in `errors[]`.
 */

export type ErrorCode =
  | 'bad_request'
  | 'permission_denied'
  | 'unsupported_path'
  | 'unsupported_operation'
  | 'not_found'
  | 'conflict'
  | 'precondition_failed'
  | 'rate_limited'
  | 'unavailable'
  | 'plugin_failed'
  | 'connection_not_initialized'
  | 'coded'
  | 'internal'
  | 'unrecoverable';

const STATUS: Record<ErrorCode, number> = {
  bad_request: 400,
  permission_denied: 403,
  unsupported_path: 404,
  not_found: 404,
  unsupported_operation: 405,
  conflict: 409,
  precondition_failed: 412,
  rate_limited: 429,
  unavailable: 503,
  plugin_failed: 502,
  // A database plugin process that restarted and has not seen Initialize for
  // this connection; the database engine re-initializes and retries once.
  connection_not_initialized: 503,
  coded: 500,
  internal: 500,
  unrecoverable: 500,
};

export class StrongroomError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Extra user-safe messages (e.g. one per invalid field). */
  readonly details: string[];

  constructor(code: ErrorCode, message: string, opts: { status?: number; details?: string[] } = {}) {
    super(message);
    this.name = 'StrongroomError';
    this.code = code;
    this.status = opts.status ?? STATUS[code];
    this.details = opts.details ?? [];
  }

  /**
   * Whether a failed revocation with this error is worth retrying. Only an
   * engine's explicit `unrecoverable` skips the retries: as in Vault, any other
   * failure (a database refusing a DROP ROLE while objects depend on it, say)
   * may clear up, and becomes irrevocable only after the attempts run out.
   */
  get retryable(): boolean {
    return this.code !== 'unrecoverable';
  }
}

export const badRequest = (message: string, details?: string[]) =>
  new StrongroomError('bad_request', message, details ? { details } : {});
export const permissionDenied = (message = 'permission denied') => new StrongroomError('permission_denied', message);
export const unsupportedPath = (path: string) => new StrongroomError('unsupported_path', `unsupported path: ${path}`);
export const unsupportedOperation = (op: string, path?: string) =>
  new StrongroomError('unsupported_operation', path ? `unsupported operation ${op} on ${path}` : `unsupported operation: ${op}`);
export const notFound = (message: string) => new StrongroomError('not_found', message);
export const codedError = (status: number, message: string) => new StrongroomError('coded', message, { status });
export const internalError = (message: string) => new StrongroomError('internal', message);
export const unrecoverable = (message: string) => new StrongroomError('unrecoverable', message);

/** The one place where an error becomes an HTTP status. Unknown errors are 500. */
export function httpStatusFor(err: unknown): number {
  return err instanceof StrongroomError ? err.status : 500;
}

/** Plain, wire-safe form of an error (what crosses gRPC). */
export interface WireError {
  code: ErrorCode;
  message: string;
  status: number;
  details?: string[];
}

export function toWireError(err: unknown): WireError {
  if (err instanceof StrongroomError) {
    return { code: err.code, message: err.message, status: err.status, ...(err.details.length ? { details: err.details } : {}) };
  }
  return { code: 'internal', message: 'internal error', status: 500 };
}

export function fromWireError(w: WireError): StrongroomError {
  return new StrongroomError(w.code, w.message, { status: w.status, ...(w.details ? { details: w.details } : {}) });
}
