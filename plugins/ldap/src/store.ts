/**
 * The engine's storage: the mount's barrier view, so everything here
 * (bind password, static and library passwords) is encrypted at rest by the
 * core. Keys hold names only, never secrets.
 *
 *   config                 the directory connection (bind DN and password, TLS, ...)
 *   root-wal               a bind-password rotation in progress (the new password), settled after a crash
 *   static-role/<name>     a static role with its current and previous password
 *   static-wal/<name>      a static rotation in progress (the password being set)
 *   role/<name>            a dynamic role (LDIF templates)
 *   library/<name>         a library set
 *   account/<name>         a library account: its set, password and check-out
 *
 * Records are kept hot in memory (read-through, dropped on every write and on
 * invalidation); WALs are read only on recovery and rotation, never cached.
 */
import { type Storage } from '@strongroom/sdk-plugin';
import { createReadCache } from '@strongroom/sdk-plugin/host';

export type Schema = 'openldap' | 'ad' | 'racf';

export interface LdapConfig {
  binddn: string;
  bindpass: string;
  url: string;
  schema: Schema;
  userdn: string;
  userattr: string;
  upndomain: string;
  connection_timeout: number;
  request_timeout: number;
  starttls: boolean;
  insecure_tls: boolean;
  certificate: string;
  client_tls_cert: string;
  client_tls_key: string;
  tls_min_version: string;
  tls_max_version: string;
  /** 0 when not set (the default length applies unless a policy is named). */
  length: number;
  password_policy: string;
  case_sensitive_names: boolean;
  /** Unix ms of the last rotate-root, 0 never. */
  last_bind_password_rotation: number;
}

export interface RootWal {
  password: string;
  started: number;
}

export interface StaticRole {
  name: string;
  dn: string;
  username: string;
  rotation_period: number;
  password: string;
  last_password: string;
  /** Unix ms of the last successful rotation. */
  last_rotation: number;
}

export interface StaticWal {
  role: string;
  dn: string;
  password: string;
  started: number;
}

export interface DynamicRole {
  name: string;
  creation_ldif: string;
  deletion_ldif: string;
  rollback_ldif: string;
  username_template: string;
  default_ttl: number;
  max_ttl: number;
}

export interface LibrarySet {
  name: string;
  service_account_names: string[];
  ttl: number;
  max_ttl: number;
  disable_check_in_enforcement: boolean;
}

export interface LibraryAccount {
  name: string;
  set: string;
  dn: string;
  password: string;
  /** A new password being set (check-in rotation), settled before the account is next handed out. */
  pending_password: string;
  checked_out: boolean;
  /** Identifies one check-out: its lease revokes only that check-out, never a later one. */
  checkout_id: string;
  borrower_entity_id: string;
  /** The borrower's token accessor (the token itself is never stored). */
  borrower_client_token: string;
}

const enc = (v: unknown) => Buffer.from(JSON.stringify(v), 'utf8');
const dec = <T>(raw: Uint8Array | null): T | null => (raw === null ? null : (JSON.parse(Buffer.from(raw).toString('utf8')) as T));

export interface Records<T> {
  get(name: string): Promise<T | null>;
  put(name: string, value: T): Promise<void>;
  delete(name: string): Promise<void>;
  list(): Promise<string[]>;
}

export interface LdapStore {
  config: { get(): Promise<LdapConfig | null>; put(c: LdapConfig): Promise<void>; delete(): Promise<void> };
  rootWal: { get(): Promise<RootWal | null>; put(w: RootWal): Promise<void>; delete(): Promise<void> };
  staticRoles: Records<StaticRole>;
  staticWals: Records<StaticWal>;
  roles: Records<DynamicRole>;
  sets: Records<LibrarySet>;
  accounts: Records<LibraryAccount>;
  invalidate(key: string): void;
}

export function createLdapStore(storage: Storage): LdapStore {
  const cache = createReadCache<object>({ max: 10_000 });
  const get = async <T>(key: string): Promise<T | null> => {
    const v = await cache.get(key, async () => dec<object>(await storage.get(key)));
    return v === null ? null : (structuredClone(v) as T);
  };
  const put = (key: string, v: unknown) => cache.write(key, () => storage.put(key, enc(v)));
  const del = (key: string) => cache.write(key, () => storage.delete(key));
  const list = async (prefix: string) => (await storage.list(prefix)).filter((k) => !k.endsWith('/')).sort();

  const records = <T>(prefix: string, cached = true): Records<T> => ({
    get: cached ? (n) => get<T>(`${prefix}${n}`) : async (n) => dec<T>(await storage.get(`${prefix}${n}`)),
    put: (n, v) => (cached ? put(`${prefix}${n}`, v) : storage.put(`${prefix}${n}`, enc(v))),
    delete: (n) => (cached ? del(`${prefix}${n}`) : storage.delete(`${prefix}${n}`)),
    list: () => list(prefix),
  });

  return {
    config: { get: () => get<LdapConfig>('config'), put: (c) => put('config', c), delete: () => del('config') },
    rootWal: {
      get: async () => dec<RootWal>(await storage.get('root-wal')),
      put: (w) => storage.put('root-wal', enc(w)),
      delete: () => storage.delete('root-wal'),
    },
    staticRoles: records<StaticRole>('static-role/'),
    staticWals: records<StaticWal>('static-wal/', false),
    roles: records<DynamicRole>('role/'),
    sets: records<LibrarySet>('library/'),
    accounts: records<LibraryAccount>('account/'),
    invalidate: (key) => cache.drop(key),
  };
}
