/**
 * The change events the core publishes itself (engines publish theirs through
 * the SDK's sendEvent): mounts enabled and disabled, ACL policies written and
 * deleted, secret leases issued, revoked and expired. Lease and mount events
 * need `sudo` on their path under `sys/leases/lookup/`, as listing leases does;
 * a policy event needs `read` (or `list`) on the policy's path.
 */
import { ROOT_NAMESPACE, type Namespace, type NamespaceRegistry } from '../namespace/namespaces.js';
import type { EventHub } from './hub.js';

export function coreEvents(hub: Pick<EventHub, 'publish'>, namespaces: Pick<NamespaceRegistry, 'byId'>) {
  const nsOf = (id: string) => namespaces.byId(id || ROOT_NAMESPACE.id);
  return {
    /** `path`: the mount's path as routed ("transit/", "auth/approle/"). */
    mount(change: 'enable' | 'disable', path: string, entry: { type: string; accessor: string; table: string }, ns: Namespace): void {
      hub.publish({
        type: `mount/${change}`,
        namespaceId: ns.id,
        namespacePath: ns.path,
        mount: 'sys/',
        path,
        metadata: { type: entry.type, accessor: entry.accessor, table: entry.table === 'auth' ? 'auth' : 'secret' },
        access: { capability: 'sudo', path: `sys/leases/lookup/${path}` },
      });
    },
    policy(change: 'write' | 'delete', ns: Namespace, name: string): void {
      hub.publish({ type: `policy/${change}`, namespaceId: ns.id, namespacePath: ns.path, mount: 'sys/', path: `sys/policies/acl/${name}`, metadata: { name } });
    },
    /** A secret lease (token expiry has its own lease, and no event here). */
    lease(change: 'issue' | 'revoke' | 'expire', leaseId: string, mountPath: string, namespaceId: string, metadata: Record<string, number | string> = {}): void {
      const ns = nsOf(namespaceId);
      if (!ns) return;
      hub.publish({
        type: `lease/${change}`,
        namespaceId: ns.id,
        namespacePath: ns.path,
        mount: mountPath,
        path: leaseId,
        metadata: { lease_id: leaseId, ...metadata },
        access: { capability: 'sudo', path: `sys/leases/lookup/${leaseId}` },
      });
    },
  };
}
