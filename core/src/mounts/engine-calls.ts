/**
 * The calls the core makes into a mount's backend outside any client request:
 * a lease's revoke and renew (for the expiration manager) and the renewal of
 * a login token (for the token store: the auth method that issued it
 * re-checks it, role still there and so on, or refuses). Each finds the mount
 * by the uuid recorded when the lease or token was made, so a remount does
 * not break them.
 */
import { randomBytes } from 'node:crypto';
import { StrongroomError, badRequest, type Backend, type LogicalRequest } from '@strongroom/sdk-plugin/host';
import type { LeaseEntry, Revoker } from '../expiration/index.js';
import type { NamespaceRegistry } from '../namespace/namespaces.js';
import type { LoginRenewal, TokenEntry } from '../token/index.js';
import { runningBackend, type MountBinding } from './mount-manager.js';
import { mountInfoOf, routePath, type Router } from './mount-table.js';

export interface EngineCalls {
  revoker: Revoker;
  renewLogin(entry: TokenEntry, increment: number): Promise<LoginRenewal>;
}

export function createEngineCalls(deps: { router: Router<MountBinding>; namespaces: NamespaceRegistry }): EngineCalls {
  const { router, namespaces } = deps;

  // A lease revoked or renewed just after unseal waits for its mount's plugin to start.
  async function backendOf(mountUuid: string): Promise<Backend> {
    const found = router.byUuid(mountUuid);
    const b = found ? await runningBackend(found.handle) : undefined;
    if (!b) throw new StrongroomError('unavailable', 'the mount that issued this lease is not available');
    return b;
  }

  function leaseRequest(lease: LeaseEntry, operation: 'renew' | 'revoke', increment: number): LogicalRequest {
    const found = router.byUuid(lease.mountUuid);
    const ns = found ? namespaces.byId(found.entry.namespace_id) : undefined;
    if (!found || !ns) throw new StrongroomError('unavailable', 'the mount that issued this lease is gone');
    return {
      id: randomBytes(8).toString('hex'),
      operation,
      path: lease.requestPath,
      mount: mountInfoOf(found.entry, ns.path),
      data: {},
      client: { remoteAddress: '', displayName: 'expiration', tokenAccessor: '', entityId: '', policies: [], metadata: {} },
      secret: {
        leaseId: lease.leaseId,
        secretType: lease.secretType,
        internalData: lease.internalData,
        ttl: lease.ttl,
        increment,
        issueTime: lease.issueTime,
        lastRenewalTime: lease.lastRenewalTime ?? null,
      },
    };
  }

  return {
    revoker: {
      revokeSecret: async (lease) => {
        await (await backendOf(lease.mountUuid)).handleRequest(leaseRequest(lease, 'revoke', 0));
      },
      renewSecret: async (lease, increment) => {
        const resp = await (await backendOf(lease.mountUuid)).handleRequest(leaseRequest(lease, 'renew', increment));
        return { ttl: resp?.secret?.ttl ?? increment, renewable: resp?.secret?.renewable ?? true, ...(resp?.data ? { data: resp.data } : {}), ...(resp?.warnings ? { warnings: resp.warnings } : {}) };
      },
    },
    async renewLogin(entry, increment) {
      const found = entry.login ? router.byUuid(entry.login.mountUuid) : undefined;
      const ns = found ? namespaces.byId(found.entry.namespace_id) : undefined;
      if (!entry.login || !found || !ns) throw badRequest('the auth mount that issued this token is gone; it cannot be renewed');
      const mountPath = routePath(found.entry);
      const backend = await runningBackend(found.handle);
      if (!backend) throw new StrongroomError('unavailable', `the auth method at ${mountPath} is not available; try the renewal again`);
      const resp = await backend.handleRequest({
        id: randomBytes(8).toString('hex'),
        operation: 'renew',
        path: entry.path.startsWith(mountPath) ? entry.path.slice(mountPath.length) : entry.path,
        mount: mountInfoOf(found.entry, ns.path),
        data: { increment },
        client: { remoteAddress: '', displayName: entry.displayName, tokenAccessor: entry.accessor, entityId: entry.entityId, policies: [...entry.policies], metadata: { ...entry.meta } },
        auth: { internalData: { ...entry.login.internalData }, metadata: { ...entry.meta }, policies: [...entry.policies] },
      });
      if (!resp?.auth) throw badRequest(`the auth method at ${mountPath} did not renew the token`);
      return { ttl: resp.auth.ttl, maxTtl: resp.auth.maxTtl, period: resp.auth.period, policies: resp.auth.policies };
    },
  };
}
