import { createKeyedMutex, defineBackend, type BackendFactory, type PathDef } from '@strongroom/sdk-plugin';
import { createPasswordHasher, type PasswordHasher } from './password.js';
import { createUserpassStore } from './store.js';
import { userPasswordPath, userPath, userPoliciesPath, usersListPath } from './paths/users.js';
import { loginPath, loginRenew } from './paths/login.js';

export interface UserpassBackendOptions {
  /** Tests: a hasher with cheaper parameters, or one that counts its derivations. */
  hasher?: PasswordHasher;
}

/** The userpass auth method. One keyed mutex per process serialises every change to one user. */
export function createUserpassBackend(opts: UserpassBackendOptions = {}): BackendFactory {
  const mutex = createKeyedMutex();
  const hasher = opts.hasher ?? createPasswordHasher();
  return defineBackend({
    type: 'auth',
    help: USERPASS_HELP,
    setup({ mount, storage }) {
      const store = createUserpassStore({ storage });
      const deps = { store, hasher, mutex, mountId: mount.uuid };
      const paths: PathDef[] = [loginPath(deps), usersListPath(deps), userPasswordPath(deps), userPoliciesPath(deps), userPath(deps)];
      return { paths, authRenew: loginRenew(deps), invalidate: (key) => store.invalidate(key) };
    },
  });
}

const USERPASS_HELP = `The userpass auth method lets people log in with a username and password.
Passwords are kept only as scrypt hashes; each user sets the properties of
the tokens its logins get.`;

export const userpassBackend = createUserpassBackend();
