/**
 * The engine's storage (the mount's barrier view: everything here is
 * encrypted at rest by the core, the administrator's password included).
 * Keys hold names only, never secrets; they are Vault's:
 *
 *   config/connection   the management API, its administrator, password and username settings
 *   config/lease        ttl and max_ttl of issued credentials
 *   role/<name>         a role: tags, vhost permissions, topic permissions
 *
 * Records live in the SDK's record store (schemas below), all cached: a creds
 * request reads config and role without a storage round trip.
 */
import { createRecordStore, type Storage } from '@strongroom/sdk-plugin';
import { z } from 'zod';

const connectionConfig = z.object({
  connection_uri: z.string(),
  username: z.string(),
  /** Never returned by any read. */
  password: z.string(),
  verify_connection: z.boolean(),
  /** "" for the built-in alphanumeric password. */
  password_policy: z.string(),
  /** "" for the default template. */
  username_template: z.string(),
});
export type ConnectionConfig = z.output<typeof connectionConfig>;

const leaseConfig = z.object({ ttl: z.number(), max_ttl: z.number() });

const vhostPermissions = z.object({ configure: z.string(), write: z.string(), read: z.string() });
const topicPermissions = z.object({ write: z.string(), read: z.string() });

const role = z.object({
  name: z.string(),
  /** Management tags, comma-separated, as read back. */
  tags: z.string(),
  /** The JSON as sent (read back as sent), and its parsed form. */
  vhosts: z.string(),
  vhost_topics: z.string(),
  vhostPermissions: z.record(z.string(), vhostPermissions),
  topicPermissions: z.record(z.string(), z.record(z.string(), topicPermissions)),
});
export type Role = z.output<typeof role>;

export type RabbitmqStore = ReturnType<typeof createRabbitmqStore>;

export function createRabbitmqStore(storage: Storage) {
  const records = createRecordStore(storage);
  return {
    records,
    /** Its lock serializes connection writes (verification included). */
    connection: records.single('config/connection', connectionConfig),
    lease: records.single('config/lease', leaseConfig),
    roles: records.kind('role/', role),
  };
}
