/**
 * The SSH secrets engine: an SSH certificate authority with several issuers
 * (sign, issue) and one-time passwords for hosts (creds, verify). Every path
 * is declared in `paths/`; what the engine stores is described in store.ts.
 */
import { defineBackend, type BackendFactory } from '@strongroom/sdk-plugin';
import type { SshDeps } from './paths/deps.js';
import { issuerPaths } from './paths/issuers.js';
import { otpPaths, otpSecret } from './paths/otp.js';
import { rolePaths } from './paths/roles.js';
import { signPaths } from './paths/sign.js';
import { tidyPath } from './paths/tidy.js';
import { createSshStore } from './store.js';

export function createSshBackend(): BackendFactory {
  return defineBackend({
    type: 'secret',
    help: SSH_HELP,
    setup({ storage, system }) {
      const store = createSshStore(storage);
      const deps: SshDeps = { store, system };
      const secret = otpSecret(deps);
      return {
        paths: [...rolePaths(deps), ...issuerPaths(deps), ...signPaths(deps), ...otpPaths(deps, secret), tidyPath(deps)],
        secrets: [secret],
        invalidate: (key) => store.records.invalidate(key),
        cleanup: async () => store.records.clear(),
      };
    },
  });
}

const SSH_HELP = `The SSH secrets engine signs SSH keys with a certificate authority
(\`config/ca\`, \`issuers/\`; roles with \`key_type=ca\`; \`sign/:role\`, \`issue/:role\`)
and hands out one-time passwords for hosts (roles with \`key_type=otp\`;
\`creds/:role\`, checked by the host at \`verify\`). Point sshd's
TrustedUserCAKeys at the text of \`public_key\`.`;

export const sshBackend = createSshBackend();
