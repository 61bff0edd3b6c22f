/**
 * The one place where the database-plugin shapes (types.ts) become
 * proto/database.proto messages and back; the plugin side
 * (serve-database.ts) and the engine side (client.ts) both use it. The
 * message types (`wire.*`) are generated from the .proto files into
 * transport/wire.ts by scripts/proto-json.js.
 */
import { badRequest } from '../errors.js';
import type * as wire from '../transport/wire.js';
import type {
  DatabaseCredentialType,
  DatabaseStatements,
  DeleteUserRequest,
  InitializeRequest,
  NewUserRequest,
  UpdateUserRequest,
} from './types.js';

type Bytes = Uint8Array;

// Order = proto enum numbers.
const CREDENTIAL_TYPES: readonly DatabaseCredentialType[] = ['password', 'rsa_private_key', 'client_certificate'];
const PROTO_ENUM_NAMES = ['PASSWORD', 'RSA_PRIVATE_KEY', 'CLIENT_CERTIFICATE'];

function encodeCredentialType(t: DatabaseCredentialType): number {
  const i = CREDENTIAL_TYPES.indexOf(t);
  if (i < 0) throw badRequest(`unknown credential_type ${String(t)}`);
  return i;
}

function decodeCredentialType(w: number | string | undefined): DatabaseCredentialType {
  const i = typeof w === 'string' ? PROTO_ENUM_NAMES.indexOf(w) : (w ?? 0);
  const t = CREDENTIAL_TYPES[i];
  if (!t) throw badRequest(`unknown credential_type ${String(w)}`);
  return t;
}

const encodeStatements = (s: DatabaseStatements | undefined): wire.Statements => ({ commands: s?.commands ?? [] });
const decodeStatements = (w: wire.Statements | null | undefined): DatabaseStatements => ({ commands: w?.commands ?? [] });

export function encodeConfig(config: Record<string, unknown>): Buffer {
  return Buffer.from(JSON.stringify(config), 'utf8');
}

export function decodeConfig(bytes: Bytes | null | undefined): Record<string, unknown> {
  if (!bytes || bytes.length === 0) return {};
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    throw badRequest('connection config is not valid JSON');
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw badRequest('connection config must be a JSON object');
  return v as Record<string, unknown>;
}

export function encodeInitializeRequest(r: InitializeRequest): wire.InitializeRequest {
  return { config_json: encodeConfig(r.config), verify_connection: r.verifyConnection };
}

export function decodeInitializeRequest(w: wire.InitializeRequest): InitializeRequest {
  return { config: decodeConfig(w.config_json), verifyConnection: Boolean(w.verify_connection) };
}

export function encodeNewUserRequest(r: NewUserRequest): wire.NewUserRequest {
  return {
    username_config: { display_name: r.usernameConfig.displayName, role_name: r.usernameConfig.roleName },
    password: r.password,
    expiration: r.expiration,
    statements: encodeStatements(r.statements),
    rollback_statements: encodeStatements(r.rollbackStatements),
    credential_type: encodeCredentialType(r.credentialType),
    public_key: Buffer.from(r.publicKey ?? '', 'utf8'),
    subject: r.subject ?? '',
  };
}

export function decodeNewUserRequest(w: wire.NewUserRequest): NewUserRequest {
  const req: NewUserRequest = {
    usernameConfig: { displayName: w.username_config?.display_name ?? '', roleName: w.username_config?.role_name ?? '' },
    password: w.password,
    expiration: Number(w.expiration),
    statements: decodeStatements(w.statements),
    rollbackStatements: decodeStatements(w.rollback_statements),
    credentialType: decodeCredentialType(w.credential_type),
  };
  if (w.public_key && w.public_key.length > 0) req.publicKey = Buffer.from(w.public_key).toString('utf8');
  if (w.subject) req.subject = w.subject;
  return req;
}

export function encodeUpdateUserRequest(r: UpdateUserRequest): wire.UpdateUserRequest {
  return {
    username: r.username,
    password: r.password ? { new_password: r.password.newPassword, statements: encodeStatements(r.password.statements) } : null,
    public_key: r.publicKey
      ? { new_public_key: Buffer.from(r.publicKey.newPublicKey, 'utf8'), statements: encodeStatements(r.publicKey.statements) }
      : null,
    expiration: r.expiration ? { new_expiration: r.expiration.newExpiration, statements: encodeStatements(r.expiration.statements) } : null,
    credential_type: encodeCredentialType(r.credentialType),
  };
}

export function decodeUpdateUserRequest(w: wire.UpdateUserRequest): UpdateUserRequest {
  const req: UpdateUserRequest = { username: w.username, credentialType: decodeCredentialType(w.credential_type) };
  if (w.password) req.password = { newPassword: w.password.new_password, statements: decodeStatements(w.password.statements) };
  if (w.public_key) {
    req.publicKey = { newPublicKey: Buffer.from(w.public_key.new_public_key ?? []).toString('utf8'), statements: decodeStatements(w.public_key.statements) };
  }
  if (w.expiration) {
    req.expiration = { newExpiration: Number(w.expiration.new_expiration), statements: decodeStatements(w.expiration.statements) };
  }
  return req;
}

export function encodeDeleteUserRequest(r: DeleteUserRequest): wire.DeleteUserRequest {
  return { username: r.username, statements: encodeStatements(r.statements) };
}

export function decodeDeleteUserRequest(w: wire.DeleteUserRequest): DeleteUserRequest {
  return { username: w.username, statements: decodeStatements(w.statements) };
}
