/**
 * The engine's storage (the mount's barrier view: everything here is
 * encrypted at rest by the core, the administrator's password included).
 * Keys hold names only, never secrets; they are Vault's:
 *
 *   config/connection   the management API, its administrator, password and username settings
 *   config/lease        ttl and max_ttl of issued credentials
 *   role/<name>         a role: tags, vhost permissions, topic permissions
 *
 * Everything is kept hot in memory (a creds request reads config and role
 * without a storage round trip) and dropped on invalidation.
 */
import { type Storage } from '@strongroom/sdk-plugin';
import { createReadCache } from '@strongroom/sdk-plugin/host';
import type { TopicPermissions, VhostPermissions } from './management-client.js';

export interface ConnectionConfig {
  connection_uri: string;
  username: string;
  /** Never returned by any read. */
  password: string;
  verify_connection: boolean;
  /** "" for the built-in alphanumeric password. */
  password_policy: string;
  /** "" for the default template. */
  username_template: string;
}

export interface LeaseConfig {
  ttl: number;
  max_ttl: number;
}

export interface Role {
  name: string;
  /** Management tags, comma-separated, as read back. */
  tags: string;
  /** The JSON as sent (read back as sent), and its parsed form. */
  vhosts: string;
  vhost_topics: string;
  vhostPermissions: Record<string, VhostPermissions>;
  topicPermissions: Record<string, Record<string, TopicPermissions>>;
}

export const CONNECTION_KEY = 'config/connection';
export const LEASE_KEY = 'config/lease';
export const ROLE_PREFIX = 'role/';

export interface RabbitmqStore {
  getConnection(): Promise<ConnectionConfig | null>;
  putConnection(c: ConnectionConfig): Promise<void>;
  getLease(): Promise<LeaseConfig | null>;
  putLease(l: LeaseConfig): Promise<void>;
  getRole(name: string): Promise<Role | null>;
  putRole(r: Role): Promise<void>;
  deleteRole(name: string): Promise<void>;
  /** Role names, sorted. */
  listRoles(): Promise<string[]>;
  /** A key changed elsewhere: forget what is cached for it. */
  invalidate(key: string): void;
}

const enc = (v: unknown) => Buffer.from(JSON.stringify(v), 'utf8');
const dec = <T>(raw: Uint8Array | null): T | null => (raw === null ? null : (JSON.parse(Buffer.from(raw).toString('utf8')) as T));

export function createRabbitmqStore(storage: Storage): RabbitmqStore {
  const cache = createReadCache<object>({ max: 10_000 });
  const get = <T extends object>(key: string) => cache.get(key, async () => dec<T>(await storage.get(key))) as Promise<T | null>;
  const put = (key: string, v: object) => cache.write(key, () => storage.put(key, enc(v)));
  const del = (key: string) => cache.write(key, () => storage.delete(key));

  return {
    getConnection: () => get<ConnectionConfig>(CONNECTION_KEY),
    putConnection: (c) => put(CONNECTION_KEY, c),
    getLease: () => get<LeaseConfig>(LEASE_KEY),
    putLease: (l) => put(LEASE_KEY, l),
    getRole: (n) => get<Role>(`${ROLE_PREFIX}${n}`),
    putRole: (r) => put(`${ROLE_PREFIX}${r.name}`, r),
    deleteRole: (n) => del(`${ROLE_PREFIX}${n}`),
    listRoles: async () => (await storage.list(ROLE_PREFIX)).filter((k) => !k.endsWith('/')).sort(),
    invalidate: (key) => cache.drop(key),
  };
}
