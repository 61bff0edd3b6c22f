/**
 * AppRole storage. Security invariants guarded here:
 * - A SecretID is never stored, nor used in a storage key: only its
 *   HMAC-SHA256 under a per-mount random key (kept in the mount's storage,
 *   which the core's barrier encrypts) is. RoleIDs are indexed the same way.
 * - Looked-up HMACs are compared to the stored one in constant time.
 * - Roles, the RoleID index and unlimited SecretIDs are cached in this process
 *   (record kinds of the SDK's record store: dropped on every write and on the
 *   core's invalidation). A use-limited SecretID is never cached: its count is
 *   always read from storage.
 * - A role and its RoleID index entry change in one batch, as do a SecretID
 *   and its accessor entry: a crash never leaves one without the other.
 * Layout: `hmac_key`, `role/<name>`, `role_id/<hmac>` -> role name,
 * `secret_id/<role>/<hmac>` -> SecretID entry, `accessor/<role>/<accessor>` -> hmac.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createRecordStore, tokens, type Storage } from '@strongroom/sdk-plugin';
import { z } from 'zod';

const roleEntry = z.object({
  name: z.string(),
  role_id: z.string(),
  bind_secret_id: z.boolean(),
  secret_id_bound_cidrs: z.array(z.string()),
  secret_id_num_uses: z.number(),
  secret_id_ttl: z.number(),
  local_secret_ids: z.boolean(),
  ...tokens.settings.shape,
  token_strictly_bind_ip: z.boolean().default(false),
});
export type RoleEntry = z.output<typeof roleEntry>;

const secretIdEntry = z.object({
  hmac: z.string(),
  accessor: z.string(),
  role: z.string(),
  metadata: z.record(z.string(), z.string()),
  cidr_list: z.array(z.string()),
  token_bound_cidrs: z.array(z.string()),
  /** Uses left; 0 is unlimited. */
  num_uses: z.number(),
  ttl: z.number(),
  creation_time: z.string(),
  /** RFC 3339; the zero time when the SecretID never expires. */
  expiration_time: z.string(),
  last_updated_time: z.string(),
});
export type SecretIdEntry = z.output<typeof secretIdEntry>;

export const ZERO_TIME = '0001-01-01T00:00:00Z';

export type ApproleStore = ReturnType<typeof createApproleStore>;

/** Records cached at most (a role or SecretID entry is well under 1 KiB). */
const CACHE_MAX = 30_000;

export function createApproleStore(deps: { storage: Storage; cacheMax?: number }) {
  const records = createRecordStore(deps.storage, { cacheMax: deps.cacheMax ?? CACHE_MAX });
  const roles = records.kind('role/', roleEntry);
  const roleIds = records.kind('role_id/', z.object({ name: z.string(), hmac: z.string() }));
  // Only unlimited SecretIDs: a login never writes them, so concurrent logins may share one cached entry.
  const secretIds = records.kind('secret_id/', secretIdEntry, { keep: (e) => e.num_uses === 0 });
  const accessors = records.kind('accessor/', z.object({ hmac: z.string() }), { cache: false });
  const key = records.single('hmac_key', z.object({ key: z.string() }));
  let keyPromise: Promise<Buffer> | null = null;

  // The key is created once per mount on first use and never rotated, so existing HMACs stay valid.
  const hmacKey = (): Promise<Buffer> =>
    (keyPromise ??= (async () => {
      const existing = await key.view();
      if (existing) return Buffer.from(existing.key, 'base64');
      const fresh = randomBytes(32);
      await key.put({ key: fresh.toString('base64') });
      return fresh;
    })().catch((err: unknown) => {
      keyPromise = null;
      throw err;
    }));

  const hmac = async (value: string) => createHmac('sha256', await hmacKey()).update(value, 'utf8').digest('hex');
  /** Constant-time comparison of two hex HMACs. */
  const sameHmac = (a: string, b: string) => {
    const x = Buffer.from(a, 'hex');
    const y = Buffer.from(b, 'hex');
    return x.length === y.length && timingSafeEqual(x, y);
  };

  return {
    hmac,
    sameHmac,
    getRole: (name: string) => roles.get(name),
    /** The cached role, frozen and shared: for logins and renewals, which change nothing (no copy each). */
    viewRole: (name: string) => roles.view(name),
    listRoles: () => roles.list(),
    /** Where the roles live in storage (a SCAN of role/ reads it in one call). */
    rolePrefix: roles.prefix,
    /** Stores a role and its RoleID index (dropping the index entry of `previousRoleId`), in one batch. */
    async saveRole(r: RoleEntry, previousRoleId = '') {
      const h = await hmac(r.role_id);
      const ops = [roleIds.putOp(h, { name: r.name, hmac: h }), roles.putOp(r.name, r)];
      if (previousRoleId !== '' && previousRoleId !== r.role_id) ops.unshift(roleIds.deleteOp(await hmac(previousRoleId)));
      await records.batch(ops);
    },
    /** Deletes a role and its RoleID index entry, in one batch. */
    async deleteRole(r: Pick<RoleEntry, 'name' | 'role_id'>) {
      await records.batch([roleIds.deleteOp(await hmac(r.role_id)), roles.deleteOp(r.name)]);
    },
    roleNameForRoleId: async (roleId: string) => {
      const h = await hmac(roleId);
      const e = await roleIds.view(h);
      return e && sameHmac(e.hmac, h) ? e.name : null;
    },
    getSecretId: (role: string, h: string) => secretIds.view(`${role}/${h}`),
    /** The SecretID entry if cached (then it is unlimited), without a storage read. */
    cachedSecretId: (role: string, h: string) => secretIds.peek(`${role}/${h}`),
    /** Stores a new SecretID and its accessor entry, in one batch. */
    putSecretId: (e: SecretIdEntry) => records.batch([secretIds.putOp(`${e.role}/${e.hmac}`, e), accessors.putOp(`${e.role}/${e.accessor}`, { hmac: e.hmac })]),
    /** Stores a changed entry of an existing SecretID; its accessor entry stays as it is. */
    updateSecretId: (e: SecretIdEntry) => secretIds.put(`${e.role}/${e.hmac}`, e),
    /** Deletes a SecretID and its accessor entry, in one batch. */
    deleteSecretId: (e: Pick<SecretIdEntry, 'role' | 'hmac' | 'accessor'>) =>
      records.batch([secretIds.deleteOp(`${e.role}/${e.hmac}`), accessors.deleteOp(`${e.role}/${e.accessor}`)]),
    hmacForAccessor: async (role: string, accessor: string) => (await accessors.view(`${role}/${accessor}`))?.hmac ?? null,
    listAccessors: (role: string) => accessors.list({ dir: `${role}/` }),
    listSecretIdHmacs: (role: string) => secretIds.list({ dir: `${role}/` }),
    listSecretIdRoles: async () => (await secretIds.list()).map((k) => k.replace(/\/$/, '')),
    /** A storage key changed outside this process: drop what is cached for it. */
    invalidate: (k: string) => {
      if (k === key.key) {
        // Every cached index entry is keyed by an HMAC under the old key.
        keyPromise = null;
        records.clear();
      } else records.invalidate(k);
    },
  };
}
