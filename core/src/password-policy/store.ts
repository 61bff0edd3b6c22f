/**
 * Password policies at rest: `<namespace prefix>sys/password_policy/<name>`
 * in the barrier (so encrypted), holding the decoded document as written;
 * parsed once and cached. A policy is test-generated before it is saved, so
 * a stored policy always generates.
 */
import { badRequest, generatePassword, testGenerate, type PasswordPolicy } from '@strongroom/sdk-plugin/host';
import type { Namespace, NamespaceRegistry } from '../namespace/namespaces.js';
import type { Physical } from '../storage/physical.js';
import { createReadThroughCache } from '../storage/read-through-cache.js';
import { decodeBase64Document } from '../hcl/base64-document.js';
import { parsePasswordPolicy } from './password-policy.js';

export interface PasswordPolicyStore {
  list(ns: Namespace): Promise<string[]>;
  /** Drops the parsed policy of a stored key another node changed (a standby following the change feed). */
  invalidate(storageKey: string): void;
  /** The document as saved (decoded from base64 if it came so), or null. */
  get(ns: Namespace, name: string): Promise<string | null>;
  /** Parses and test-generates first: a bad or unsatisfiable document is a 400 and nothing is written. */
  put(ns: Namespace, name: string, text: string): Promise<void>;
  delete(ns: Namespace, name: string): Promise<void>;
  /** A password from the named policy, or null when there is no such policy. */
  generate(ns: Namespace, name: string): Promise<string | null>;
}

// Names are one path segment; the route already keeps '/' out.
const NAME = /^[^\s\x00-\x1f\x7f/]{1,256}$/;

function checkPasswordPolicyName(name: string): string {
  if (!NAME.test(name)) throw badRequest('name: must be 1 to 256 characters without whitespace, "/" or control characters');
  return name;
}

interface Stored {
  text: string;
  policy: PasswordPolicy;
}

export function createPasswordPolicyStore(deps: { store: Pick<Physical, 'get' | 'put' | 'delete' | 'list'>; namespaces: Pick<NamespaceRegistry, 'storagePrefix'> }): PasswordPolicyStore {
  // Only saved policies are cached: names asked for and missing would let a caller grow the map.
  const cache = createReadThroughCache<Stored | null>();
  const folderOf = (ns: Namespace) => `${deps.namespaces.storagePrefix(ns)}sys/password_policy/`;
  const keyOf = (ns: Namespace, name: string) => folderOf(ns) + checkPasswordPolicyName(name);

  async function load(ns: Namespace, name: string): Promise<Stored | null> {
    const k = keyOf(ns, name);
    return cache.load(
      k,
      async () => {
        const raw = await deps.store.get(k);
        if (!raw) return null;
        const text = (JSON.parse(Buffer.from(raw).toString('utf8')) as { policy: string }).policy;
        return { text, policy: parsePasswordPolicy(text) };
      },
      (stored) => stored !== null,
    );
  }

  return {
    invalidate: (storageKey) => cache.forget(storageKey),
    async list(ns) {
      return (await deps.store.list(folderOf(ns))).filter((n) => !n.endsWith('/')).sort();
    },
    async get(ns, name) {
      return (await load(ns, name))?.text ?? null;
    },
    async put(ns, name, input) {
      const k = keyOf(ns, name);
      const text = decodeBase64Document(input);
      const policy = parsePasswordPolicy(text);
      testGenerate(policy);
      await deps.store.put(k, Buffer.from(JSON.stringify({ policy: text }), 'utf8'));
      cache.forget(k);
    },
    async delete(ns, name) {
      const k = keyOf(ns, name);
      await deps.store.delete(k);
      cache.forget(k);
    },
    async generate(ns, name) {
      const stored = await load(ns, name);
      return stored ? generatePassword(stored.policy) : null;
    },
  };
}
