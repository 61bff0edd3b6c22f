import { createKeyedMutex, defineBackend, type BackendFactory, type PathDef } from '@strongroom/sdk-plugin';
import { createApproleStore } from './store.js';
import { roleFieldPaths, roleIdPath, roleListPath, rolePath } from './paths/role.js';
import { secretIdPaths } from './paths/secret-id.js';
import { loginPath, loginRenew } from './paths/login.js';
import { tidyPath } from './paths/tidy.js';

export interface ApproleBackendOptions {
  /** Injectable clock for tests (SecretID expiry). */
  now?: () => Date;
}

/** The AppRole auth method. One keyed mutex per process serialises every SecretID's use count. */
export function createApproleBackend(opts: ApproleBackendOptions = {}): BackendFactory {
  const mutex = createKeyedMutex();
  return defineBackend({
    type: 'auth',
    help: APPROLE_HELP,
    setup({ mount, storage, logger }) {
      const store = createApproleStore({ storage });
      const now = opts.now ?? (() => new Date());
      const deps = { store, mutex, mountId: mount.uuid, now };
      const dropSecretIds = async (role: string) => {
        for (const h of await store.listSecretIdHmacs(role)) {
          const e = await store.getSecretId(role, h);
          if (e) await store.deleteSecretId(e);
        }
      };
      const paths: PathDef[] = [
        loginPath(deps),
        tidyPath({ ...deps, logger }),
        roleListPath(deps),
        rolePath({ ...deps, dropSecretIds }),
        roleIdPath(deps),
        ...roleFieldPaths(deps),
        ...secretIdPaths(deps),
      ];
      return { paths, authRenew: loginRenew(deps), invalidate: (key) => store.invalidate(key) };
    },
  });
}

const APPROLE_HELP = `The AppRole auth method lets machines and services log in with a RoleID
and, usually, a SecretID. Roles set the login constraints (SecretID, CIDRs)
and the properties of the issued tokens.`;

export const approleBackend = createApproleBackend();
