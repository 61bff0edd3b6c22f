/**
 * A token's access, by one rule for the pipeline's ACL check and for
 * sys/capabilities*: the policies of the token's own namespace, compiled once
 * per policy set, applied to the path as that namespace sees it; nothing
 * outside the token's namespace and the ones below it.
 */
import type { AclCache } from '../policy/acl-cache.js';
import type { PolicyStore } from '../policy/policy-store.js';
import { isWithinNamespace, tokenScope, type Namespace, type NamespaceRegistry } from '../namespace/namespaces.js';
import type { TokenEntry, TokenStore } from '../token/index.js';
import type { AclPort } from './ports.js';

export function createTokenAccess(deps: { policies: Pick<PolicyStore, 'resolve'>; namespaces: NamespaceRegistry; aclCache: AclCache; tokens: Pick<TokenStore, 'lookup' | 'lookupByAccessor'> }) {
  const { namespaces, tokens } = deps;
  const aclFor = async (names: readonly string[], ns: Namespace) => deps.aclCache.get(await deps.policies.resolve(ns, names));
  /** The token's ACL and the path as its own namespace sees it, or null outside its reach. */
  const scopedAcl = async (e: TokenEntry | null, ns: Namespace, path: string) => {
    const scope = e ? tokenScope(namespaces, e.namespaceId, ns, path) : null;
    return e && scope ? { acl: await aclFor(e.policies, scope.namespace), path: scope.path } : null;
  };
  const capabilitiesOf = async (e: TokenEntry | null, ns: Namespace, path: string) => {
    const scoped = await scopedAcl(e, ns, path);
    return scoped ? scoped.acl.capabilities(scoped.path) : ['deny'];
  };
  const acl: AclPort = {
    check: async (t, ns, op, path, data) => {
      const r = (await aclFor(t.policies, ns)).check(op, path, data);
      if (r.minWrappingTtl === undefined && r.maxWrappingTtl === undefined) return { allowed: r.allowed, sudo: r.sudo };
      return { allowed: r.allowed, sudo: r.sudo, minWrappingTtl: r.minWrappingTtl, maxWrappingTtl: r.maxWrappingTtl };
    },
    readable: async (t, ns, paths) => {
      const acl = await aclFor(t.policies, ns);
      return paths.map((p) => acl.isRoot || acl.check('read', p).allowed || acl.check('list', p).allowed);
    },
  };
  return {
    acl,
    capabilities: {
      forEntry: (entry: TokenEntry | null, ns: Namespace, path: string) => capabilitiesOf(entry, ns, path),
      // Another namespace's token (above or beside the request's) is answered as an unknown accessor.
      forAccessor: async (accessor: string, ns: Namespace, path: string) => {
        const e = await tokens.lookupByAccessor(accessor);
        return capabilitiesOf(e && isWithinNamespace(namespaces, ns, e.namespaceId) ? e : null, ns, path);
      },
      forToken: async (token: string, ns: Namespace, path: string) => capabilitiesOf(await tokens.lookup(token), ns, path),
      seesMount: async (entry: TokenEntry | null, ns: Namespace, mountPath: string) => {
        const scoped = await scopedAcl(entry, ns, mountPath);
        return scoped !== null && scoped.acl.anyAccessUnder(scoped.path);
      },
    },
  };
}
