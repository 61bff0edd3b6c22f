/**
 * The database-plugin contract in TypeScript (proto/database.proto on the
 * wire). The database engine holds a `DatabasePluginClient`; a database
 * plugin (postgresql, mysql) implements `DatabasePlugin` and hands it to
 * `serveDatabasePlugin` (a process of its own), or the engine runs it in its
 * own process (`createInProcessDatabaseTransport`, the built-ins), with the
 * same messages and the same dispatcher either way.
 *
 * One plugin process serves every connection of its (name, version): each
 * call is a frame on the process's multiplexed Database stream and names its
 * connection id (Vault's multiplexed dbplugin shape), and the process keeps
 * one `DatabaseInstance` per id. A call for an id the process does not know (it
 * restarted) fails with code `connection_not_initialized`; the engine then
 * initializes again with the stored config and retries once.
 *
 * The engine generates passwords and hands them in; a plugin never invents
 * credentials. Errors a plugin returns must already be scrubbed of
 * connection URLs and passwords.
 */

/** WireError code for "this process has no instance for that connection id". */
export const CONNECTION_NOT_INITIALIZED = 'connection_not_initialized';

export type DatabaseCredentialType = 'password' | 'rsa_private_key' | 'client_certificate';

export interface DatabaseStatements {
  commands: string[];
}

export interface InitializeRequest {
  /** The connection's config: connection_url, username, password, max_open_connections, ... */
  config: Record<string, unknown>;
  verifyConnection: boolean;
}

export interface InitializeResponse {
  /** The config to persist (the plugin may normalise it). */
  config: Record<string, unknown>;
}

export interface NewUserRequest {
  usernameConfig: { displayName: string; roleName: string };
  /** For credential_type password (and to set on the account for the other types when the plugin needs one). */
  password: string;
  /** Unix seconds. */
  expiration: number;
  statements: DatabaseStatements;
  rollbackStatements: DatabaseStatements;
  credentialType: DatabaseCredentialType;
  /** PEM public key, for rsa_private_key. */
  publicKey?: string;
  /** Certificate subject, for client_certificate. */
  subject?: string;
}

export interface UpdateUserRequest {
  username: string;
  credentialType: DatabaseCredentialType;
  password?: { newPassword: string; statements: DatabaseStatements };
  publicKey?: { newPublicKey: string; statements: DatabaseStatements };
  /** Unix seconds. */
  expiration?: { newExpiration: number; statements: DatabaseStatements };
}

export interface DeleteUserRequest {
  username: string;
  statements: DatabaseStatements;
}

/** One configured connection inside a plugin process. */
export interface DatabaseInstance {
  initialize(req: InitializeRequest): Promise<InitializeResponse>;
  newUser(req: NewUserRequest): Promise<{ username: string }>;
  updateUser(req: UpdateUserRequest): Promise<void>;
  deleteUser(req: DeleteUserRequest): Promise<void>;
  close(): Promise<void>;
}

/** What a database plugin author implements. */
export interface DatabasePlugin {
  /** "postgresql", "mysql". */
  type: string;
  newInstance(): DatabaseInstance;
}

/** The engine's view of one connection on a running plugin process. */
export interface DatabasePluginClient {
  type(): Promise<string>;
  initialize(req: InitializeRequest): Promise<InitializeResponse>;
  newUser(req: NewUserRequest): Promise<{ username: string }>;
  updateUser(req: UpdateUserRequest): Promise<void>;
  deleteUser(req: DeleteUserRequest): Promise<void>;
  /** Closes the connection's instance in the plugin (not the process). */
  close(): Promise<void>;
}

/** Where a database plugin serves (a process, or `builtin`): declared with the SystemView call that answers it. */
export type { DatabasePluginAddress } from '../system-view.js';
