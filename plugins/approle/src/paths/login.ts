/**
 * Login. Guards: the SecretID is looked up by HMAC and compared in constant
 * time; its use count is decremented under a per-SecretID lock, so N
 * concurrent logins on a SecretID with num_uses k succeed exactly min(N, k)
 * times; every failure says the same thing, so a caller cannot probe which of
 * RoleID or SecretID was wrong.
 */
import { badRequest, cidr, definePath, f, type KeyedMutex, type PathDef, type SecretHandler, tokens } from '@strongroom/sdk-plugin';
import type { ApproleStore, SecretIdEntry } from '../store.js';
import { isExpired } from './secret-id.js';

interface Deps {
  store: ApproleStore;
  mutex: KeyedMutex;
  mountId: string;
  now: () => Date;
}

const INVALID = 'invalid role or secret ID';
const cidrRefused = (ip: string) => `source address "${ip}" unauthorized through CIDR restrictions on the secret ID`;

export function loginPath({ store, mutex, mountId, now }: Deps): PathDef {
  /**
   * Checks a SecretID and spends one of its uses. An unlimited SecretID already
   * cached is used without its lock: a login never writes it, so concurrent
   * logins with it need not queue. Anything else is read under the lock, where
   * a use-limited one's count is decremented (and an unlimited one gets cached).
   */
  const spendSecretId = async (role: string, h: string, ip: string): Promise<SecretIdEntry> => {
    const cached = store.cachedSecretId(role, h);
    if (cached && store.sameHmac(cached.hmac, h) && !isExpired(cached, now())) {
      if (!cidr.ipAllowed(ip, cached.cidr_list)) throw badRequest(cidrRefused(ip));
      return cached;
    }
    return mutex.run(`${mountId}:sid:${role}:${h}`, async () => {
      const e = await store.getSecretId(role, h);
      if (!e || !store.sameHmac(e.hmac, h)) throw badRequest(INVALID);
      if (isExpired(e, now())) {
        await store.deleteSecretId(e);
        throw badRequest(INVALID);
      }
      if (!cidr.ipAllowed(ip, e.cidr_list)) throw badRequest(cidrRefused(ip));
      if (e.num_uses === 1) await store.deleteSecretId(e);
      else if (e.num_uses > 1) await store.updateSecretId({ ...e, num_uses: e.num_uses - 1, last_updated_time: now().toISOString() });
      return e;
    });
  };

  return definePath({
    pattern: 'login',
    unauthenticated: true,
    fields: {
      role_id: f.sensitive(f.string().describe('The RoleID of the role')).optional(),
      secret_id: f.sensitive(f.string().describe('The SecretID; required when the role binds one')).optional(),
    },
    // The role's name for its RoleID (for a quota naming the role); the SecretID is not checked.
    resolveRole: async (req) => (req.data.role_id ? store.roleNameForRoleId(req.data.role_id) : null),
    operations: {
      update: {
        summary: 'Log in with a RoleID and SecretID',
        handler: async (req) => {
          const roleId = req.data.role_id ?? '';
          if (roleId === '') throw badRequest('field "role_id": missing role_id');
          const name = await store.roleNameForRoleId(roleId);
          const role = name === null ? null : await store.viewRole(name);
          if (!role) throw badRequest(INVALID);
          const ip = req.client.remoteAddress;
          if (!cidr.ipAllowed(ip, role.secret_id_bound_cidrs)) throw badRequest(`source address "${ip}" unauthorized by CIDR restrictions on the role`);

          let used: SecretIdEntry | null = null;
          if (role.bind_secret_id) {
            const secretId = req.data.secret_id ?? '';
            if (secretId === '') throw badRequest('field "secret_id": missing secret_id');
            used = await spendSecretId(role.name, await store.hmac(secretId), ip);
          }

          const tokenCidrs = role.token_strictly_bind_ip
            ? [cidr.hostCidr(ip)]
            : used && used.token_bound_cidrs.length > 0
              ? used.token_bound_cidrs
              : role.token_bound_cidrs;
          if (tokenCidrs.length > 0 && !cidr.ipAllowed(ip, tokenCidrs)) throw badRequest(`source address "${ip}" unauthorized by token_bound_cidrs`);
          return tokens.auth(role, {
            displayName: 'approle',
            metadata: { ...(used?.metadata ?? {}), role_name: role.name },
            internalData: { role_name: role.name, role_id: role.role_id, ...(used ? { secret_id_accessor: used.accessor } : {}) },
            boundCidrs: tokenCidrs,
            aliasName: role.role_id,
          });
        },
      },
    },
    synopsis: 'Issue a token for a RoleID and SecretID.',
    description: `Answers an auth block whose token carries the role's token settings and the
SecretID's metadata. The SecretID's use count is spent once per successful login.`,
  });
}

/**
 * Renewal of a token this mount's login issued, as Vault does: the role must
 * still exist with the same RoleID (a role deleted and created again under the
 * same name has a new one), and the token takes the role's current TTLs.
 */
export function loginRenew({ store }: Pick<Deps, 'store'>): SecretHandler {
  return async (req) => {
    const auth = req.auth;
    const name = auth?.internalData.role_name;
    if (!auth || typeof name !== 'string' || name === '') throw badRequest('the token carries no role_name; it cannot be renewed');
    const role = await store.viewRole(name);
    if (!role) throw badRequest(`role "${name}" does not exist during renewal`);
    const roleId = auth.internalData.role_id;
    if (typeof roleId === 'string' && roleId !== role.role_id) throw badRequest(`role "${name}" has a different role_id than at login; the token cannot be renewed`);
    return tokens.renewal(auth, role);
  };
}
