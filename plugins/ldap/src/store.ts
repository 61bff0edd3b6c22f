/**
 * The engine's storage: the mount's barrier view, so everything here
 * (bind password, static and library passwords) is encrypted at rest by the
 * core. Keys hold names only, never secrets.
 *
 *   config                 the directory connection (bind DN and password, TLS, ...)
 *   root-wal/root          a bind-password rotation in progress (the new password), settled after a crash
 *   static-role/<name>     a static role with its current and previous password
 *   static-wal/<name>      a static rotation in progress (the password being set)
 *   role/<name>            a dynamic role (LDIF templates)
 *   library/<name>         a library set
 *   account/<name>         a library account: its set, password and check-out
 *   account-wal/<name>     a library account's password rotation in progress
 *
 * Records live in the SDK's record store (schemas below; records cached,
 * write-ahead entries never); a rotation's result and the deletion of its
 * write-ahead entry are one batch (the kit's rotation scheduler).
 */
import { createRecordStore, type Storage } from '@strongroom/sdk-plugin';
import { z } from 'zod';

export const SCHEMA_NAMES = ['openldap', 'ad', 'racf'] as const;
export type Schema = (typeof SCHEMA_NAMES)[number];

const ldapConfig = z.object({
  binddn: z.string(),
  bindpass: z.string(),
  url: z.string(),
  schema: z.enum(SCHEMA_NAMES),
  userdn: z.string().default(''),
  userattr: z.string().default(''),
  upndomain: z.string().default(''),
  connection_timeout: z.number(),
  request_timeout: z.number(),
  starttls: z.boolean().default(false),
  insecure_tls: z.boolean().default(false),
  certificate: z.string().default(''),
  client_tls_cert: z.string().default(''),
  client_tls_key: z.string().default(''),
  tls_min_version: z.string().default('tls12'),
  tls_max_version: z.string().default('tls12'),
  /** 0 when not set (the default length applies unless a policy is named). */
  length: z.number().default(0),
  password_policy: z.string().default(''),
  case_sensitive_names: z.boolean().default(false),
  /** Unix ms of the last rotate-root, 0 never. */
  last_bind_password_rotation: z.number().default(0),
});
export type LdapConfig = z.output<typeof ldapConfig>;

/** A password being set on an entry (the bind entry, a static role's, a library account's). */
const passwordWal = z.object({ dn: z.string(), password: z.string(), started: z.number() });
export type PasswordWal = z.output<typeof passwordWal>;

const staticRole = z.object({
  name: z.string(),
  dn: z.string(),
  username: z.string(),
  rotation_period: z.number(),
  password: z.string(),
  last_password: z.string().default(''),
  /** Unix ms of the last successful rotation. */
  last_rotation: z.number(),
});
export type StaticRole = z.output<typeof staticRole>;

const dynamicRole = z.object({
  name: z.string(),
  creation_ldif: z.string(),
  deletion_ldif: z.string(),
  rollback_ldif: z.string().default(''),
  username_template: z.string().default(''),
  default_ttl: z.number().default(0),
  max_ttl: z.number().default(0),
});
export type DynamicRole = z.output<typeof dynamicRole>;

const librarySet = z.object({
  name: z.string(),
  service_account_names: z.array(z.string()),
  ttl: z.number(),
  max_ttl: z.number(),
  disable_check_in_enforcement: z.boolean().default(false),
});
export type LibrarySet = z.output<typeof librarySet>;

const libraryAccount = z.object({
  name: z.string(),
  set: z.string(),
  dn: z.string(),
  password: z.string(),
  checked_out: z.boolean(),
  /** Identifies one check-out: its lease revokes only that check-out, never a later one. */
  checkout_id: z.string().default(''),
  borrower_entity_id: z.string().default(''),
  /** The borrower's token accessor (the token itself is never stored). */
  borrower_client_token: z.string().default(''),
});
export type LibraryAccount = z.output<typeof libraryAccount>;

export type LdapStore = ReturnType<typeof createLdapStore>;

export function createLdapStore(storage: Storage) {
  const records = createRecordStore(storage);
  return {
    records,
    config: records.single('config', ldapConfig),
    staticRoles: records.kind('static-role/', staticRole),
    roles: records.kind('role/', dynamicRole),
    sets: records.kind('library/', librarySet),
    accounts: records.kind('account/', libraryAccount),
    // Write-ahead entries are read only on recovery and rotation: never cached.
    rootWals: records.kind('root-wal/', passwordWal, { cache: false }),
    staticWals: records.kind('static-wal/', passwordWal, { cache: false }),
    accountWals: records.kind('account-wal/', passwordWal, { cache: false }),
  };
}
