/**
 * The one place where the SDK's TypeScript shapes (logical.ts, errors.ts,
 * describe.ts) become proto messages (proto/backend.proto) and back. Both the
 * plugin side (serve.ts) and the core side (core/src/supervisor) use it, so the
 * two can never disagree. The message types (`wire.*`) are generated from the
 * .proto files into wire.ts by scripts/proto-json.js.
 *
 * Engine data travels as JSON bytes: an absent value is an empty buffer, and
 * JSON `null` is kept distinct from absent.
 */
import type {
  AuthSpec,
  ClientInfo,
  ExistenceResult,
  LogicalRequest,
  LogicalResponse,
  MountInfo,
  Operation,
  PathOperation,
  SecretRef,
  SpecialPaths,
} from '../logical.js';
import type { BackendDescription, PathDescription } from '../describe.js';
import { StrongroomError, fromWireError, toWireError, type ErrorCode, type WireError } from '../errors.js';
import type { MountTtls } from '../system-view.js';
import type * as wire from './wire.js';

type Bytes = Uint8Array;

/**
 * Any of the three stream messages (wire.Frame, wire.StorageFrame,
 * wire.SystemViewFrame) as the multiplexer handles them: an id and one member
 * of the `kind` oneof set, looked up by name.
 */
export interface WireFrame {
  id: number;
  kind?: string;
  [member: string]: unknown;
}

// ------------------------------------------------------------------ JSON bytes

const EMPTY = Buffer.alloc(0);

export function jsonBytes(value: unknown): Buffer {
  return value === undefined ? EMPTY : Buffer.from(JSON.stringify(value), 'utf8');
}

export function parseJsonBytes<T>(bytes: Bytes | null | undefined): T | undefined {
  if (!bytes || bytes.length === 0) return undefined;
  return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')) as T;
}

function objectFrom(bytes: Bytes | null | undefined): Record<string, unknown> {
  const v = parseJsonBytes<Record<string, unknown>>(bytes);
  return v && typeof v === 'object' ? v : {};
}

// ------------------------------------------------------------------ errors

const ERROR_CODES: ReadonlySet<string> = new Set<ErrorCode>([
  'bad_request',
  'permission_denied',
  'unsupported_path',
  'unsupported_operation',
  'not_found',
  'conflict',
  'precondition_failed',
  'rate_limited',
  'unavailable',
  'plugin_failed',
  'connection_not_initialized',
  'coded',
  'internal',
  'unrecoverable',
]);

/** Any thrown value -> wire error. Unknown errors become a bare "internal error" (their text may hold secrets). */
export function encodeError(err: unknown): wire.WireError {
  const w = toWireError(err);
  return { code: w.code, message: w.message, status: w.status, details: w.details ?? [] };
}

export function decodeError(w: wire.WireError): StrongroomError {
  const code = (ERROR_CODES.has(w.code) ? w.code : 'internal') as ErrorCode;
  const wire: WireError = { code, message: w.message, status: w.status || 500 };
  if (w.details && w.details.length > 0) wire.details = w.details;
  return fromWireError(wire);
}

// ------------------------------------------------------------------ mount, special paths

export function encodeMount(m: MountInfo): wire.MountInfo {
  return { path: m.path, type: m.type, uuid: m.uuid, accessor: m.accessor, namespace: m.namespace, options: m.options, is_auth: m.isAuth };
}

export function decodeMount(w: wire.MountInfo): MountInfo {
  return {
    path: w.path,
    type: w.type,
    uuid: w.uuid,
    accessor: w.accessor,
    namespace: w.namespace,
    options: { ...w.options },
    isAuth: w.is_auth,
  };
}

export function encodeSpecialPaths(p: SpecialPaths): wire.SpecialPaths {
  return { unauthenticated: p.unauthenticated, root: p.root };
}

export function decodeSpecialPaths(w: wire.SpecialPaths | null): SpecialPaths {
  return { unauthenticated: w ? [...w.unauthenticated] : [], root: w ? [...w.root] : [] };
}

// ------------------------------------------------------------------ requests

const NO_CLIENT: ClientInfo = { remoteAddress: '', displayName: '', tokenAccessor: '', entityId: '', policies: [], metadata: {} };

export function encodeRequest(r: LogicalRequest, ttls?: MountTtls): wire.Request {
  const c = r.client ?? NO_CLIENT;
  return {
    id: r.id,
    operation: r.operation,
    path: r.path,
    mount_uuid: r.mount.uuid,
    data_json: r.dataJson ?? jsonBytes(r.data),
    client: {
      remote_address: c.remoteAddress,
      display_name: c.displayName,
      token_accessor: c.tokenAccessor,
      entity_id: c.entityId,
      policies: c.policies,
      metadata: c.metadata,
      alias: c.alias ? { mount_accessor: c.alias.mountAccessor, name: c.alias.name, metadata: c.alias.metadata } : null,
    },
    secret: r.secret ? encodeSecretRef(r.secret) : null,
    auth: r.auth ? { internal_data_json: jsonBytes(r.auth.internalData), metadata: r.auth.metadata, policies: r.auth.policies } : null,
    headers: r.headers ?? {},
    resolve_existence: r.resolveExistence === true,
    mount_ttls: ttls ? { default_lease_ttl: ttls.defaultTtl, max_lease_ttl: ttls.maxTtl } : null,
  };
}

function encodeSecretRef(s: SecretRef): wire.SecretRef {
  return {
    lease_id: s.leaseId,
    secret_type: s.secretType,
    internal_data_json: jsonBytes(s.internalData),
    ttl: s.ttl,
    increment: s.increment,
    issue_time: s.issueTime,
    last_renewal_time: s.lastRenewalTime ?? 0,
  };
}

function decodeClient(c: wire.ClientInfo): ClientInfo {
  const out: ClientInfo = {
    remoteAddress: c.remote_address,
    displayName: c.display_name,
    tokenAccessor: c.token_accessor,
    entityId: c.entity_id,
    policies: c.policies,
    metadata: c.metadata,
  };
  if (c.alias) out.alias = { mountAccessor: c.alias.mount_accessor, name: c.alias.name, metadata: c.alias.metadata };
  return out;
}

/** The plugin side rebuilds the full request; `mount` comes from the mount's Setup, not the wire. */
export function decodeRequest(w: wire.Request, mount: MountInfo): LogicalRequest {
  const c = w.client;
  const req: LogicalRequest = {
    id: w.id,
    operation: w.operation as Operation,
    path: w.path,
    mount,
    data: objectFrom(w.data_json),
    client: c ? decodeClient(c) : { ...NO_CLIENT, policies: [], metadata: {} },
  };
  if (w.secret) {
    req.secret = {
      leaseId: w.secret.lease_id,
      secretType: w.secret.secret_type,
      internalData: objectFrom(w.secret.internal_data_json),
      ttl: w.secret.ttl,
      increment: w.secret.increment,
      issueTime: w.secret.issue_time,
      lastRenewalTime: w.secret.last_renewal_time === 0 ? null : w.secret.last_renewal_time,
    };
  }
  if (w.auth) {
    req.auth = { internalData: objectFrom(w.auth.internal_data_json), metadata: w.auth.metadata, policies: w.auth.policies };
  }
  if (w.headers && Object.keys(w.headers).length > 0) req.headers = w.headers;
  if (w.resolve_existence) req.resolveExistence = true;
  return req;
}

/** The mount's TTLs a request carries (the core sends them with each one); null when it did not. */
export function decodeMountTtls(w: wire.Request): MountTtls | null {
  const t = w.mount_ttls;
  return t ? { defaultTtl: t.default_lease_ttl, maxTtl: t.max_lease_ttl } : null;
}

// ------------------------------------------------------------------ responses

export function encodeResponse(r: LogicalResponse): wire.Response {
  return {
    data_json: jsonBytes(r.data),
    secret: r.secret
      ? { type: r.secret.type, ttl: r.secret.ttl, max_ttl: r.secret.maxTtl, renewable: r.secret.renewable, internal_data_json: jsonBytes(r.secret.internalData) }
      : null,
    auth: r.auth ? encodeAuth(r.auth) : null,
    warnings: r.warnings ?? [],
    redirect: r.redirect ?? '',
    raw: r.raw ? { status: r.raw.status, content_type: r.raw.contentType, body: r.raw.body, base64: r.raw.base64 ?? false } : null,
    status: r.status ?? 0,
  };
}

function encodeAuth(a: AuthSpec): wire.AuthSpec {
  return {
    display_name: a.displayName,
    policies: a.policies,
    identity_policies: a.identityPolicies ?? [],
    has_identity_policies: a.identityPolicies !== undefined,
    no_default_policy: a.noDefaultPolicy,
    metadata: a.metadata,
    internal_data_json: jsonBytes(a.internalData),
    ttl: a.ttl,
    max_ttl: a.maxTtl,
    explicit_max_ttl: a.explicitMaxTtl,
    period: a.period,
    num_uses: a.numUses,
    renewable: a.renewable,
    bound_cidrs: a.boundCidrs,
    token_type: a.tokenType,
    alias_name: a.aliasName ?? '',
  };
}

export function decodeResponse(w: wire.Response): LogicalResponse {
  const out: LogicalResponse = {};
  const data = parseJsonBytes<Record<string, unknown> | null>(w.data_json);
  if (data !== undefined) out.data = data;
  if (w.secret) {
    out.secret = {
      type: w.secret.type,
      ttl: w.secret.ttl,
      maxTtl: w.secret.max_ttl,
      renewable: w.secret.renewable,
      internalData: objectFrom(w.secret.internal_data_json),
    };
  }
  if (w.auth) {
    const a = w.auth;
    out.auth = {
      displayName: a.display_name,
      policies: a.policies,
      noDefaultPolicy: a.no_default_policy,
      metadata: a.metadata,
      internalData: objectFrom(a.internal_data_json),
      ttl: a.ttl,
      maxTtl: a.max_ttl,
      explicitMaxTtl: a.explicit_max_ttl,
      period: a.period,
      numUses: a.num_uses,
      renewable: a.renewable,
      boundCidrs: a.bound_cidrs,
      tokenType: a.token_type,
    };
    if (a.has_identity_policies) out.auth.identityPolicies = a.identity_policies;
    if (a.alias_name) out.auth.aliasName = a.alias_name;
  }
  if (w.warnings.length > 0) out.warnings = w.warnings;
  if (w.redirect) out.redirect = w.redirect;
  if (w.raw) {
    out.raw = { status: w.raw.status, contentType: w.raw.content_type, body: w.raw.body };
    if (w.raw.base64) out.raw.base64 = true;
  }
  if (w.status) out.status = w.status;
  return out;
}

/** Plugin side: the outcome of handleRequest -> reply message. */
export function encodeHandleReply(result: LogicalResponse | null): wire.HandleRequestReply {
  return { response: result === null ? null : encodeResponse(result), err: null };
}

/** Core side: reply message -> the outcome (throws the typed error). */
export function decodeHandleReply(w: wire.HandleRequestReply): LogicalResponse | null {
  if (w.err) throw decodeError(w.err);
  return w.response ? decodeResponse(w.response) : null;
}

export function encodeExistence(r: ExistenceResult): wire.ExistenceCheckReply {
  return { check_found: r.checkFound, exists: r.exists, err: null };
}

export function decodeExistence(w: wire.ExistenceCheckReply): ExistenceResult {
  if (w.err) throw decodeError(w.err);
  return { checkFound: w.check_found, exists: w.exists };
}

/** Throws the carried error, if any (for ErrorReply-shaped messages). */
export function throwIfError(w: { err: wire.WireError | null } | null | undefined): void {
  if (w && w.err) throw decodeError(w.err);
}

// ------------------------------------------------------------------ describe

export function encodeDescription(d: BackendDescription): wire.BackendDescription {
  return {
    help: d.help,
    secret_types: d.secretTypes,
    paths: d.paths.map((p) => ({
      pattern: p.pattern,
      fields: p.fields.map((f) => ({
        name: f.name,
        schema_json: jsonBytes(f.schema),
        description: f.description,
        required: f.required,
        sensitive: f.sensitive ?? false,
        deprecated: f.deprecated ?? false,
        in_path: f.inPath ?? false,
      })),
      operations: p.operations.map((o) => ({ operation: o.operation, summary: o.summary, description: o.description ?? '' })),
      existence_check: p.existenceCheck,
      synopsis: p.synopsis,
      description: p.description,
      unauthenticated: p.unauthenticated ?? false,
      authorize_json: p.authorize ? jsonBytes(p.authorize) : Buffer.alloc(0),
    })),
  };
}

export function decodeDescription(w: wire.BackendDescription | null): BackendDescription {
  if (!w) return { help: '', paths: [], secretTypes: [] };
  return {
    help: w.help,
    secretTypes: [...w.secret_types],
    paths: w.paths.map((p): PathDescription => {
      const path: PathDescription = {
        pattern: p.pattern,
        fields: p.fields.map((f) => {
          const field: PathDescription['fields'][number] = {
            name: f.name,
            schema: objectFrom(f.schema_json),
            description: f.description,
            required: f.required,
          };
          if (f.sensitive) field.sensitive = true;
          if (f.deprecated) field.deprecated = true;
          if (f.in_path) field.inPath = true;
          return field;
        }),
        operations: p.operations.map((o) => {
          const op: PathDescription['operations'][number] = { operation: o.operation as PathOperation, summary: o.summary };
          if (o.description) op.description = o.description;
          return op;
        }),
        existenceCheck: p.existence_check,
        synopsis: p.synopsis,
        description: p.description,
      };
      if (p.unauthenticated) path.unauthenticated = true;
      if (p.authorize_json && p.authorize_json.length > 0) path.authorize = objectFrom(p.authorize_json) as PathDescription['authorize'] & object;
      return path;
    }),
  };
}
