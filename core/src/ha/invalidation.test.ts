/** Which cache each changed key leaves, and which keys rebuild a standby's state. */
import { invalidateKeys } from './invalidation.js';

function targets() {
  const seen: string[] = [];
  const note = (what: string) => (k: string) => void seen.push(`${what}:${k}`);
  return {
    seen,
    t: {
      barrier: { invalidate: note('barrier') },
      policies: { invalidate: note('policy') },
      passwordPolicies: { invalidate: note('password') },
      tokens: { invalidate: note('token') },
      backendOf: (uuid: string) => (uuid === 'u1' ? { invalidateKey: async (k: string) => void seen.push(`plugin:${uuid}:${k}`) } : undefined),
    },
  };
}

it('drops each key from the barrier cache and hands mount keys to their plugin, store keys to their store', async () => {
  const { seen, t } = targets();
  const r = await invalidateKeys(['logical/u1/data/a', 'namespaces/n1/auth/u1/role/r', 'logical/gone/x', 'sys/policy/p', 'sys/password_policy/q', 'sys/token/id/h', 'sys/expire/id/l'], t);
  expect(r).toEqual({ rebuild: false });
  expect(seen.filter((s) => !s.startsWith('barrier:')).sort()).toEqual(['password:sys/password_policy/q', 'plugin:u1:data/a', 'plugin:u1:role/r', 'policy:sys/policy/p', 'token:sys/token/id/h']);
  expect(seen.filter((s) => s.startsWith('barrier:'))).toHaveLength(7);
});

it.each(['core/mounts', 'namespaces/n1/core/auth', 'core/audit', 'core/cors-config', 'core/keyring', 'core/token-keys', 'core/namespaces/n2', 'core/plugin-catalog/secret/x'])(
  '%s rebuilds the state',
  async (key) => {
    expect(await invalidateKeys([key], targets().t)).toEqual({ rebuild: true });
  },
);

it('a plugin that fails to drop a key rebuilds the state (it would serve stale values)', async () => {
  const { t } = targets();
  t.backendOf = () => ({ invalidateKey: async () => Promise.reject(new Error('gone')) });
  expect(await invalidateKeys(['logical/u1/k'], t)).toEqual({ rebuild: true });
});
