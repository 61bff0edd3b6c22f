/** The token store as the pipeline uses it (TokenPort): a caller's token, its uses, logins made into tokens. */
import { StrongroomError, type MountTtls } from '@strongroom/sdk-plugin/host';
import { routePath, type MountEntry } from '../mounts/mount-table.js';
import type { TokenEntry, TokenStore } from '../token/index.js';
import type { CallerToken, TokenPort } from './ports.js';

export function createTokenPort(tokens: TokenStore, mountTtls: (entry: MountEntry) => MountTtls): TokenPort {
  return {
    lookup: async (id) => {
      const e = await tokens.lookup(id);
      return e ? toCaller(id, e) : null;
    },
    use: async (t) => {
      // The entry looked up at the start of this request: no second lookup.
      const r = await tokens.useToken(t.entry);
      if (!r) throw new StrongroomError('permission_denied', 'permission denied');
      return { exhausted: r.lastUse, entry: r.entry };
    },
    // revoke(id) would miss it: after its last use the token no longer looks up by id.
    revokeExhausted: (t) => tokens.revokeEntry(t.entry),
    cidrAllowed: (t, addr) => tokens.checkCidr(t.entry, addr),
    createFromAuth: async (auth, ctx) => {
      const ttls = mountTtls(ctx.mount);
      const created = await tokens.createFromLogin(auth, {
        mountUuid: ctx.mount.uuid,
        mountAccessor: ctx.mount.accessor,
        path: ctx.path,
        mountPath: routePath(ctx.mount),
        namespaceId: ctx.namespace.id,
        mountDefaultTtl: ttls.defaultTtl,
        mountMaxTtl: ttls.maxTtl,
      });
      return tokens.authBlock(created.entry, created.id);
    },
  };
}

function toCaller(id: string, e: TokenEntry): CallerToken {
  return {
    id,
    accessor: e.accessor,
    policies: [...e.policies],
    displayName: e.displayName,
    entityId: e.entityId,
    metadata: { ...e.meta },
    namespaceId: e.namespaceId,
    type: e.type,
    ttl: e.ttl,
    numUses: e.numUses,
    boundCidrs: [...e.boundCidrs],
    key: e.key,
    isRoot: e.policies.includes('root'),
    entry: e,
  };
}
