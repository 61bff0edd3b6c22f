/**
 * What a standby does with the keys another node changed (from the change
 * feed, ha/follower.ts): every key leaves the barrier's read cache; a key of
 * a mount's storage goes to that mount's backend as `InvalidateKey` (the
 * plugin drops its own cache of it); policies, password policies and token
 * entries leave their stores' caches; a quota rule or the quota config is
 * read again. The configuration the standby built
 * its state from (mount tables, audit devices, CORS, namespaces, the plugin
 * catalog, the keyring and token keys) changes rarely: a change there asks
 * for the state to be rebuilt from storage instead of patching it in place.
 */
export interface InvalidationTargets {
  barrier: { invalidate(key: string): void };
  /** The backend serving the mount with this uuid, if bound here. */
  backendOf(uuid: string): { invalidateKey(key: string): Promise<void> } | undefined;
  policies: { invalidate(storageKey: string): void };
  passwordPolicies: { invalidate(storageKey: string): void };
  tokens: { invalidate(storageKey: string): void };
  quotas: { invalidate(storageKey: string): Promise<void> };
}

const REBUILD_KEYS = new Set(['core/mounts', 'core/auth', 'core/audit', 'core/cors-config', 'core/keyring', 'core/token-keys']);
const REBUILD_PREFIXES = ['core/namespaces/', 'core/plugin-catalog/'];
const NAMESPACED = /^namespaces\/[^/]+\//;
const MOUNT_KEY = /^(?:logical|auth)\/([^/]+)\/(.*)$/s;

/** Applies `keys`; true when the state must be rebuilt (a configuration key changed). */
export async function invalidateKeys(keys: readonly string[], t: InvalidationTargets): Promise<{ rebuild: boolean }> {
  let rebuild = false;
  const plugin: Array<Promise<void>> = [];
  for (const key of keys) {
    t.barrier.invalidate(key);
    const local = key.replace(NAMESPACED, '');
    if (REBUILD_KEYS.has(local) || REBUILD_PREFIXES.some((p) => local.startsWith(p))) {
      rebuild = true;
      continue;
    }
    const m = MOUNT_KEY.exec(local);
    if (m) {
      const backend = t.backendOf(m[1]!);
      // A plugin that fails to drop its cache would serve stale values: say so, rebuild.
      if (backend) plugin.push(backend.invalidateKey(m[2]!).catch(() => void (rebuild = true)));
      continue;
    }
    if (local.startsWith('sys/policy/')) t.policies.invalidate(key);
    else if (local.startsWith('sys/password_policy/')) t.passwordPolicies.invalidate(key);
    else if (local.startsWith('sys/token/')) t.tokens.invalidate(key);
    else if (local.startsWith('sys/quotas/')) plugin.push(t.quotas.invalidate(key).catch(() => void (rebuild = true)));
  }
  await Promise.all(plugin);
  return { rebuild };
}
