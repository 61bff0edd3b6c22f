/**
 * Login. Guards: a login never tells whether the user exists. A missing user
 * and a wrong password get the same 400 with the same text, after the same
 * work: the password is hashed against a dummy hash with the current
 * parameters when there is no user. The CIDR check comes only after the
 * password matched, so it reveals nothing to someone without the password.
 */
import { badRequest, cidr, definePath, f, type PathDef, permissionDenied, type SecretHandler, tokens } from '@strongroom/sdk-plugin';
import type { PasswordHasher } from '../password.js';
import type { UserpassStore } from '../store.js';
import { userKey } from './users.js';

interface Deps {
  store: UserpassStore;
  hasher: PasswordHasher;
}

const INVALID = 'invalid username or password';

export function loginPath({ store, hasher }: Deps): PathDef {
  return definePath({
    pattern: 'login/:username',
    unauthenticated: true,
    fields: {
      username: f.string().describe('Username (case-insensitive).'),
      password: f.sensitive(f.string().describe('Password of the user.')).optional(),
    },
    // The role a quota names here is the user (Vault's userpass answers the same); nothing is checked.
    resolveRole: async (req) => {
      try {
        return userKey(req.data.username);
      } catch {
        return null;
      }
    },
    operations: {
      update: {
        summary: 'Log in with a username and password',
        handler: async (req) => {
          const password = req.data.password ?? '';
          if (password === '') throw badRequest('field "password": missing password');
          let name: string | null;
          try {
            name = userKey(req.data.username);
          } catch {
            // A name no user can have: still the same work and the same answer.
            name = null;
          }
          const user = name === null ? null : await store.viewUser(name);
          const ok = user ? await hasher.check(password, user.password_hash) : await hasher.checkMissing(password);
          if (!user || !ok) throw badRequest(INVALID);

          const ip = req.client.remoteAddress;
          if (user.token_bound_cidrs.length > 0 && !cidr.ipAllowed(ip, user.token_bound_cidrs)) throw permissionDenied();
          return tokens.auth(user, {
            displayName: user.name,
            metadata: { username: user.name },
            // The policies the login granted: a renewal is refused once the user's differ (Vault's rule).
            internalData: { username: user.name, policies: [...user.token_policies] },
            aliasName: user.name,
          });
        },
      },
    },
    synopsis: 'Log in with a username and password.',
    description: `Answers an auth block whose token carries the user's token settings, or 400
"${INVALID}" for a wrong password and an unknown user alike.`,
  });
}

/**
 * Renewal of a token this mount's login issued, as Vault does: the user must
 * still exist with the policies the login granted, and the token takes the
 * user's current TTLs.
 */
export function loginRenew({ store }: Pick<Deps, 'store'>): SecretHandler {
  return async (req) => {
    const auth = req.auth;
    const name = auth?.internalData.username;
    if (!auth || typeof name !== 'string' || name === '') throw badRequest('the token carries no username; it cannot be renewed');
    const user = await store.viewUser(name);
    if (!user) throw badRequest(`user "${name}" does not exist; the token cannot be renewed`);
    const granted = auth.internalData.policies;
    const same = Array.isArray(granted) && granted.length === user.token_policies.length && granted.every((p, i) => p === user.token_policies[i]);
    if (!same) throw badRequest('the policies of the user have changed; the token cannot be renewed');
    return tokens.renewal(auth, user);
  };
}
