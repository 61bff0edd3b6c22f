/**
 * AppRole storage. Security invariants guarded here:
 * - A SecretID is never stored, nor used in a storage key: only its
 *   HMAC-SHA256 under a per-mount random key (kept in the mount's storage,
 *   which the core's barrier encrypts) is. RoleIDs are indexed the same way.
 * - Looked-up HMACs are compared to the stored one in constant time.
 * - Roles, the RoleID index and unlimited SecretIDs are cached in this process
 *   (the SDK's read cache: dropped on every write and on the core's invalidation). A
 *   use-limited SecretID is never cached: its count is always read from storage.
 * Layout: `hmac_key`, `role/<name>`, `role_id/<hmac>` -> role name,
 * `secret_id/<role>/<hmac>` -> SecretID entry, `accessor/<role>/<accessor>` -> hmac.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { type Storage } from '@strongroom/sdk-plugin';
import { createReadCache, getJSON, putJSON } from '@strongroom/sdk-plugin/host';

export interface RoleEntry {
  name: string;
  role_id: string;
  bind_secret_id: boolean;
  secret_id_bound_cidrs: string[];
  secret_id_num_uses: number;
  secret_id_ttl: number;
  local_secret_ids: boolean;
  token_ttl: number;
  token_max_ttl: number;
  token_policies: string[];
  token_bound_cidrs: string[];
  token_strictly_bind_ip: boolean;
  token_explicit_max_ttl: number;
  token_no_default_policy: boolean;
  token_num_uses: number;
  token_period: number;
  token_type: string;
}

export interface SecretIdEntry {
  hmac: string;
  accessor: string;
  role: string;
  metadata: Record<string, string>;
  cidr_list: string[];
  token_bound_cidrs: string[];
  /** Uses left; 0 is unlimited. */
  num_uses: number;
  ttl: number;
  creation_time: string;
  /** RFC 3339; the zero time when the SecretID never expires. */
  expiration_time: string;
  last_updated_time: string;
}

export const ZERO_TIME = '0001-01-01T00:00:00Z';

export type ApproleStore = ReturnType<typeof createApproleStore>;

/** Entries each cache keeps at most (a role or SecretID entry is well under 1 KiB). */
export const CACHE_MAX = 10_000;

export function createApproleStore(deps: { storage: Storage; cacheMax?: number }) {
  const { storage } = deps;
  const max = deps.cacheMax ?? CACHE_MAX;
  let keyPromise: Promise<Buffer> | null = null;
  const roles = createReadCache<RoleEntry>({ max });
  const roleIds = createReadCache<{ name: string; hmac: string }>({ max });
  // Only unlimited SecretIDs: a login never writes them, so concurrent logins may share one cached entry.
  const secretIds = createReadCache<SecretIdEntry>({ max, keep: (e) => e.num_uses === 0 });

  // The key is created once per mount on first use and never rotated, so existing HMACs stay valid.
  const hmacKey = (): Promise<Buffer> =>
    (keyPromise ??= (async () => {
      const existing = await getJSON<{ key: string }>(storage, 'hmac_key');
      if (existing) return Buffer.from(existing.key, 'base64');
      const key = randomBytes(32);
      await putJSON(storage, 'hmac_key', { key: key.toString('base64') });
      return key;
    })().catch((err: unknown) => {
      keyPromise = null;
      throw err;
    }));

  const hmac = async (value: string) => createHmac('sha256', await hmacKey()).update(value, 'utf8').digest('hex');

  return {
    hmac,
    /** Constant-time comparison of two hex HMACs. */
    sameHmac: (a: string, b: string) => {
      const x = Buffer.from(a, 'hex');
      const y = Buffer.from(b, 'hex');
      return x.length === y.length && timingSafeEqual(x, y);
    },
    getRole: (name: string) => roles.get(name, () => getJSON<RoleEntry>(storage, `role/${name}`)),
    putRole: (r: RoleEntry) => roles.write(r.name, () => putJSON(storage, `role/${r.name}`, r)),
    listRoles: () => storage.list('role/'),
    deleteRole: (name: string) => roles.write(name, () => storage.delete(`role/${name}`)),
    roleNameForRoleId: async (roleId: string) => {
      const h = await hmac(roleId);
      const e = await roleIds.get(h, () => getJSON<{ name: string; hmac: string }>(storage, `role_id/${h}`));
      return e && Buffer.from(e.hmac).length === Buffer.from(h).length && timingSafeEqual(Buffer.from(e.hmac), Buffer.from(h)) ? e.name : null;
    },
    putRoleId: async (roleId: string, name: string) => {
      const h = await hmac(roleId);
      await roleIds.write(h, () => putJSON(storage, `role_id/${h}`, { name, hmac: h }));
    },
    deleteRoleId: async (roleId: string) => {
      const h = await hmac(roleId);
      await roleIds.write(h, () => storage.delete(`role_id/${h}`));
    },
    getSecretId: (role: string, h: string) => secretIds.get(`${role}/${h}`, () => getJSON<SecretIdEntry>(storage, `secret_id/${role}/${h}`)),
    /** The SecretID entry if cached (then it is unlimited), without a storage read. */
    cachedSecretId: (role: string, h: string) => secretIds.peek(`${role}/${h}`),
    putSecretId: (e: SecretIdEntry) =>
      secretIds.write(`${e.role}/${e.hmac}`, async () => {
        await putJSON(storage, `secret_id/${e.role}/${e.hmac}`, e);
        await putJSON(storage, `accessor/${e.role}/${e.accessor}`, { hmac: e.hmac });
      }),
    /** Stores a changed entry of an existing SecretID; its accessor index stays as it is. */
    updateSecretId: (e: SecretIdEntry) => secretIds.write(`${e.role}/${e.hmac}`, () => putJSON(storage, `secret_id/${e.role}/${e.hmac}`, e)),
    deleteSecretId: (e: Pick<SecretIdEntry, 'role' | 'hmac' | 'accessor'>) =>
      secretIds.write(`${e.role}/${e.hmac}`, async () => {
        await storage.delete(`secret_id/${e.role}/${e.hmac}`);
        await storage.delete(`accessor/${e.role}/${e.accessor}`);
      }),
    hmacForAccessor: async (role: string, accessor: string) =>
      (await getJSON<{ hmac: string }>(storage, `accessor/${role}/${accessor}`))?.hmac ?? null,
    listAccessors: (role: string) => storage.list(`accessor/${role}/`),
    listSecretIdHmacs: (role: string) => storage.list(`secret_id/${role}/`),
    listSecretIdRoles: async () => (await storage.list('secret_id/')).map((k) => k.replace(/\/$/, '')),
    /** A storage key changed outside this process: drop what is cached for it. */
    invalidate: (key: string) => {
      if (key.startsWith('role/')) roles.drop(key.slice('role/'.length));
      else if (key.startsWith('role_id/')) roleIds.drop(key.slice('role_id/'.length));
      else if (key.startsWith('secret_id/')) secretIds.drop(key.slice('secret_id/'.length));
      else if (key === 'hmac_key') {
        // Every cached index entry is keyed by an HMAC under the old key.
        keyPromise = null;
        roles.clear();
        roleIds.clear();
        secretIds.clear();
      }
    },
  };
}
