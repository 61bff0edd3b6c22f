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
 * Configs and roles are kept hot in memory and dropped on invalidation.
 */
import type { Storage } from '@strongroom/sdk-plugin';
import type * as database from '@strongroom/sdk-plugin/database';

export type CredentialType = database.DatabaseCredentialType;

export interface ConnectionConfig {
  name: string;
  plugin_name: string;
  /** As pinned by the caller (canonical "v1.2.3"), "" when not pinned. */
  plugin_version: string;
  verify_connection: boolean;
  allowed_roles: string[];
  root_rotation_statements: string[];
  password_policy: string;
  /** What the plugin gets on Initialize (connection_url, username, password, ...), as the plugin returned it. */
  connection_details: Record<string, unknown>;
}

export interface DynamicRole {
  name: string;
  db_name: string;
  default_ttl: number;
  max_ttl: number;
  creation_statements: string[];
  revocation_statements: string[];
  rollback_statements: string[];
  renew_statements: string[];
  credential_type: CredentialType;
  credential_config: Record<string, string>;
}

export interface StaticRole {
  name: string;
  db_name: string;
  username: string;
  rotation_period: number;
  rotation_statements: string[];
  credential_type: CredentialType;
  credential_config: Record<string, string>;
  /** The password set by the last successful rotation. */
  password: string;
  /** Unix ms of the last successful rotation; the next is due rotation_period later. */
  last_rotation: number;
}

export interface RotationWal {
  role: string;
  username: string;
  password: string;
  started: number;
}

export interface RootRotationWal {
  connection: string;
  username: string;
  password: string;
  started: number;
}

const enc = (v: unknown) => Buffer.from(JSON.stringify(v), 'utf8');
const dec = <T>(raw: Uint8Array | null): T | null => (raw === null ? null : (JSON.parse(Buffer.from(raw).toString('utf8')) as T));

export interface DatabaseStore {
  getConfig(name: string): Promise<ConnectionConfig | null>;
  putConfig(c: ConnectionConfig): Promise<void>;
  deleteConfig(name: string): Promise<void>;
  listConfigs(): Promise<string[]>;
  getRole(name: string): Promise<DynamicRole | null>;
  putRole(r: DynamicRole): Promise<void>;
  deleteRole(name: string): Promise<void>;
  listRoles(): Promise<string[]>;
  getStaticRole(name: string): Promise<StaticRole | null>;
  putStaticRole(r: StaticRole): Promise<void>;
  deleteStaticRole(name: string): Promise<void>;
  listStaticRoles(): Promise<string[]>;
  getWal(role: string): Promise<RotationWal | null>;
  putWal(w: RotationWal): Promise<void>;
  deleteWal(role: string): Promise<void>;
  listWals(): Promise<string[]>;
  getRootWal(connection: string): Promise<RootRotationWal | null>;
  putRootWal(w: RootRotationWal): Promise<void>;
  deleteRootWal(connection: string): Promise<void>;
  /** A key changed elsewhere: forget what is cached for it. */
  invalidate(key: string): void;
}

export function createDatabaseStore(storage: Storage): DatabaseStore {
  const cache = new Map<string, unknown>();

  const get = async <T>(key: string): Promise<T | null> => {
    if (cache.has(key)) return structuredClone(cache.get(key) as T);
    const v = dec<T>(await storage.get(key));
    if (v !== null) cache.set(key, v);
    return v === null ? null : structuredClone(v);
  };
  const put = async (key: string, v: unknown) => {
    cache.delete(key);
    await storage.put(key, enc(v));
    cache.set(key, structuredClone(v));
  };
  const del = async (key: string) => {
    cache.delete(key);
    await storage.delete(key);
  };
  const list = async (prefix: string) => (await storage.list(prefix)).filter((k) => !k.endsWith('/')).sort();

  return {
    getConfig: (n) => get(`config/${n}`),
    putConfig: (c) => put(`config/${c.name}`, c),
    deleteConfig: (n) => del(`config/${n}`),
    listConfigs: () => list('config/'),
    getRole: (n) => get(`role/${n}`),
    putRole: (r) => put(`role/${r.name}`, r),
    deleteRole: (n) => del(`role/${n}`),
    listRoles: () => list('role/'),
    getStaticRole: (n) => get(`static-role/${n}`),
    putStaticRole: (r) => put(`static-role/${r.name}`, r),
    deleteStaticRole: (n) => del(`static-role/${n}`),
    listStaticRoles: () => list('static-role/'),
    // WALs are read only on recovery and rotation: never cached.
    getWal: async (n) => dec<RotationWal>(await storage.get(`static-wal/${n}`)),
    putWal: (w) => storage.put(`static-wal/${w.role}`, enc(w)),
    deleteWal: (n) => storage.delete(`static-wal/${n}`),
    listWals: () => list('static-wal/'),
    getRootWal: async (n) => dec<RootRotationWal>(await storage.get(`root-wal/${n}`)),
    putRootWal: (w) => storage.put(`root-wal/${w.connection}`, enc(w)),
    deleteRootWal: (n) => storage.delete(`root-wal/${n}`),
    invalidate: (key) => void cache.delete(key),
  };
}
