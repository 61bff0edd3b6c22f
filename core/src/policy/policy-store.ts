/**
 * ACL policies at rest: `<namespace prefix>sys/policy/<name>` in the barrier,
 * parsed once and cached. `root` is implicit and immutable; `default` is
 * written on first use so operators can edit it, and cannot be deleted.
 */

import type { Physical } from '../storage/physical.js';
import { createReadThroughCache } from '../storage/read-through-cache.js';
import type { Namespace, NamespaceRegistry } from '../namespace/namespaces.js';
import { DEFAULT_POLICY_TEXT } from './default-policy.js';
import {
  assertPolicyDeletable,
  assertPolicyWritable,
  DEFAULT_POLICY_NAME,
  normalizePolicyName,
  parsePolicy,
  ROOT_POLICY,
  RESPONSE_WRAPPING_POLICY,
  RESPONSE_WRAPPING_POLICY_NAME,
  ROOT_POLICY_NAME,
  type Policy,
} from './policy.js';

export interface PolicyStore {
  list(ns: Namespace): Promise<string[]>;
  /** Drops the parsed policy of a stored key another node changed (a standby following the change feed). */
  invalidate(storageKey: string): void;
  get(ns: Namespace, name: string): Promise<string | null>;
  put(ns: Namespace, name: string, text: string): Promise<void>;
  delete(ns: Namespace, name: string): Promise<void>;
  /** Parsed policies for a token's policy names; unknown names are skipped, as in Vault. */
  resolve(ns: Namespace, names: readonly string[]): Promise<Policy[]>;
  /** Writes the default policy when missing. */
  ensureDefault(ns: Namespace): Promise<void>;
}

export function createPolicyStore(deps: {
  store: Pick<Physical, 'get' | 'put' | 'delete' | 'list'>;
  namespaces: NamespaceRegistry;
  /** After a policy is written or deleted (change events). */
  onChange?(ns: Namespace, name: string, change: 'write' | 'delete'): void;
}): PolicyStore {
  const cache = createReadThroughCache<Policy | null>();
  const keyOf = (ns: Namespace, name: string) => `${deps.namespaces.storagePrefix(ns)}sys/policy/${name}`;

  async function load(ns: Namespace, name: string): Promise<Policy | null> {
    if (name === ROOT_POLICY_NAME) return ROOT_POLICY;
    if (name === RESPONSE_WRAPPING_POLICY_NAME) return RESPONSE_WRAPPING_POLICY;
    return cache.load(keyOf(ns, name), async () => {
      const raw = await deps.store.get(keyOf(ns, name));
      return raw ? parsePolicy(name, Buffer.from(raw).toString('utf8')) : null;
    });
  }

  return {
    invalidate: (storageKey) => cache.forget(storageKey),
    async list(ns) {
      const names = await deps.store.list(`${deps.namespaces.storagePrefix(ns)}sys/policy/`);
      return [...new Set([...names.filter((n) => !n.endsWith('/')), ROOT_POLICY_NAME])].sort();
    },
    async get(ns, rawName) {
      const name = normalizePolicyName(rawName);
      if (name === ROOT_POLICY_NAME) return '';
      const p = await load(ns, name);
      return p ? p.text : null;
    },
    async put(ns, rawName, text) {
      const name = normalizePolicyName(rawName);
      assertPolicyWritable(name);
      parsePolicy(name, text); // refuses bad documents with a 400 naming the problem
      const k = keyOf(ns, name);
      await deps.store.put(k, Buffer.from(text, 'utf8'));
      cache.forget(k);
      deps.onChange?.(ns, name, 'write');
    },
    async delete(ns, rawName) {
      const name = normalizePolicyName(rawName);
      assertPolicyDeletable(name);
      const k = keyOf(ns, name);
      await deps.store.delete(k);
      cache.forget(k);
      deps.onChange?.(ns, name, 'delete');
    },
    async resolve(ns, names) {
      const out: Policy[] = [];
      for (const n of names) {
        const p = await load(ns, n);
        if (p) out.push(p);
      }
      return out;
    },
    async ensureDefault(ns) {
      const k = keyOf(ns, DEFAULT_POLICY_NAME);
      if (!(await deps.store.get(k))) await deps.store.put(k, Buffer.from(DEFAULT_POLICY_TEXT, 'utf8'));
    },
  };
}

