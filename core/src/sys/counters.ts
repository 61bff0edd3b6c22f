/**
 * sys/internal/counters/tokens, as Vault documents it: the number of service
 * tokens in the whole server (batch tokens are not stored, so not counted).
 * Served by the root namespace's sys/ only: a tenant learns nothing of others.
 */
import type { TokenStore } from '../token/index.js';
import { defineSysPath, type SysPathDef } from './sys-path.js';

export function counterPaths(deps: { tokens: Pick<TokenStore, 'countTokens'> }): SysPathDef[] {
  return [
    defineSysPath({
      rootOnly: true,
      pattern: 'internal/counters/tokens',
      synopsis: 'The number of service tokens in the server.',
      operations: {
        read: {
          summary: 'Service token count.',
          handler: async () => {
            const total = (await deps.tokens.countTokens()).filter((c) => c.type === 'service').reduce((n, c) => n + c.count, 0);
            return { data: { counters: { service_tokens: { total } } } };
          },
        },
      },
    }),
  ];
}
