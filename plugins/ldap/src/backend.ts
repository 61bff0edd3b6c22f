import { createKeyedMutex, defineBackend, type BackendFactory } from '@strongroom/sdk-plugin';
import { createEngine } from './engine.js';
import { configPaths } from './paths/config.js';
import { createLibrary, libraryPaths, librarySecret } from './paths/library.js';
import { dynamicSecret, rolePaths } from './paths/roles.js';
import { staticRolePaths } from './paths/static-roles.js';
import { createRotation } from './rotation.js';
import { createLdapStore } from './store.js';

export interface LdapBackendOptions {
  /** Injectable clock (unix ms) for TTL and rotation tests. */
  now?: () => number;
  /** Start the once-a-second rotation timer (default true; tests may drive `periodic` themselves). */
  rotationTimer?: boolean;
}

/** The LDAP secrets engine: static roles, dynamic roles (leases) and library sets on one directory. */
export function createLdapBackend(opts: LdapBackendOptions = {}): BackendFactory {
  const mutex = createKeyedMutex();
  return defineBackend({
    type: 'secret',
    help: LDAP_HELP,
    setup({ mount, storage, system, logger }) {
      // The mutex is per process; keys carry the mount so two mounts never wait on each other.
      const scoped = { run: <T>(key: string, fn: () => Promise<T>) => mutex.run(`${mount.uuid}/${key}`, fn) };
      const store = createLdapStore(storage);
      const engine = createEngine({ store, system, logger, mutex: scoped, now: opts.now ?? Date.now });
      const rotation = createRotation(engine);
      if (opts.rotationTimer !== false) rotation.start();
      const library = createLibrary(engine);
      const dynamic = dynamicSecret(engine);
      const lent = librarySecret(engine, library);
      return {
        paths: [...configPaths(engine, rotation), ...staticRolePaths(engine, rotation), ...rolePaths(engine, dynamic), ...libraryPaths(engine, library, lent)],
        secrets: [dynamic, lent],
        invalidate: (key) => store.invalidate(key),
        periodic: () => rotation.tick(),
        async cleanup() {
          rotation.stop();
          await engine.directory.close();
        },
      };
    },
  });
}

const LDAP_HELP = `The LDAP secrets engine manages directory accounts (OpenLDAP, Active
Directory, RACF): static roles rotate the password of an existing entry,
dynamic roles create entries from LDIF templates for the length of a lease,
and library sets lend existing accounts to one borrower at a time, rotating
their password at every check-in.`;

export const ldapBackend = createLdapBackend();
