/**
 * The engine's storage (the mount's barrier view: everything here is
 * encrypted at rest by the core, including connection passwords and static
 * role passwords). Keys hold names only, never secrets.
 *
 *   config/<name>        a connection (plugin, allowed roles, details for the plugin)
 *   role/<name>          a dynamic role
 *   static-role/<name>   a static role with its current password and last rotation
 *   static-wal/<name>    a rotation in progress (the password being set), replayed after a crash
 *   root-wal/<name>      a root rotation in progress (the new root password), settled after a crash
 *
 * Records live in the SDK's record store (schemas below; configs and roles
 * cached, write-ahead entries never); multi-key changes are one batch.
 */
import { createRecordStore, type Storage } from '@strongroom/sdk-plugin';
import type * as database from '@strongroom/sdk-plugin/database';
import { z } from 'zod';

export type CredentialType = database.DatabaseCredentialType;
const credentialType = z.enum(['password', 'rsa_private_key', 'client_certificate']);

const connectionConfig = z.object({
  name: z.string(),
  plugin_name: z.string(),
  /** As pinned by the caller (canonical "v1.2.3"), "" when not pinned. */
  plugin_version: z.string().default(''),
  verify_connection: z.boolean().default(true),
  allowed_roles: z.array(z.string()).default([]),
  root_rotation_statements: z.array(z.string()).default([]),
  password_policy: z.string().default(''),
  /** What the plugin gets on Initialize (connection_url, username, password, ...), as the plugin returned it. */
  connection_details: z.record(z.string(), z.unknown()),
});
export type ConnectionConfig = z.output<typeof connectionConfig>;

const dynamicRole = z.object({
  name: z.string(),
  db_name: z.string(),
  default_ttl: z.number(),
  max_ttl: z.number(),
  creation_statements: z.array(z.string()),
  revocation_statements: z.array(z.string()).default([]),
  rollback_statements: z.array(z.string()).default([]),
  renew_statements: z.array(z.string()).default([]),
  credential_type: credentialType.default('password'),
  credential_config: z.record(z.string(), z.string()).default({}),
});
export type DynamicRole = z.output<typeof dynamicRole>;

const staticRole = z.object({
  name: z.string(),
  db_name: z.string(),
  username: z.string(),
  rotation_period: z.number(),
  rotation_statements: z.array(z.string()).default([]),
  credential_type: credentialType.default('password'),
  credential_config: z.record(z.string(), z.string()).default({}),
  /** The password set by the last successful rotation. */
  password: z.string(),
  /** Unix ms of the last successful rotation; the next is due rotation_period later. */
  last_rotation: z.number(),
});
export type StaticRole = z.output<typeof staticRole>;

const rotationWal = z.object({ role: z.string(), username: z.string(), password: z.string(), started: z.number() });
export type RotationWal = z.output<typeof rotationWal>;

const rootRotationWal = z.object({ connection: z.string(), username: z.string(), password: z.string(), started: z.number() });
export type RootRotationWal = z.output<typeof rootRotationWal>;

export type DatabaseStore = ReturnType<typeof createDatabaseStore>;

export function createDatabaseStore(storage: Storage) {
  const records = createRecordStore(storage);
  return {
    records,
    configs: records.kind('config/', connectionConfig),
    roles: records.kind('role/', dynamicRole),
    staticRoles: records.kind('static-role/', staticRole),
    // Write-ahead entries are read only on recovery and rotation: never cached.
    staticWals: records.kind('static-wal/', rotationWal, { cache: false }),
    rootWals: records.kind('root-wal/', rootRotationWal, { cache: false }),
  };
}
