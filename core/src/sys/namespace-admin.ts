/**
 * A namespace's life: creation gives it the mounts every namespace starts
 * with (sys/ and auth/token/) and the default policy; deletion removes, in
 * this order, its leases (revoked through their engines), its tokens, its
 * mounts with their storage, and then whatever else is stored under its
 * prefix (policies, password policies, token roles, mount tables), and last
 * its record. Deletion is asynchronous as in Vault: the namespace stops
 * resolving at once; a deletion cut short by a crash resumes at the next
 * unseal (the record is marked first), so nothing of it is left behind.
 *
 * A lease is never forgotten (issue 26, finding 7): its credential would
 * outlive it in the database or broker with no one left to revoke it. So a
 * deletion first revokes the namespace's leases while it still serves, and is
 * refused, naming them, while any cannot be revoked; one that loses a lease
 * later stops and keeps the namespace marked, to try again at the next unseal.
 */
import { badRequest } from '@strongroom/sdk-plugin/host';
import type { ExpirationManager } from '../expiration/index.js';
import type { CoreLogger } from '../log/logger.js';
import type { DefaultMounts, MountManager } from '../mounts/mount-manager.js';
import { routePath } from '../mounts/mount-table.js';
import type { Physical } from '../storage/physical.js';
import type { NamespaceStore } from '../namespace/namespace-store.js';
import type { Namespace, NamespaceRegistry } from '../namespace/namespaces.js';

export interface NamespaceAdmin {
  create(parent: Namespace, name: string, customMetadata: Record<string, string>): Promise<Namespace>;
  patch(ns: Namespace, changes: Record<string, string | null>): Promise<Namespace>;
  delete(ns: Namespace): Promise<void>;
  children(parent: Namespace): Namespace[];
  find(path: string): Namespace | undefined;
  /** Resumes deletions a crash cut short (after the mounts are loaded). */
  resumeDeletions(): void;
  /** Resolves when no deletion is running (tests, shutdown). */
  idle(): Promise<void>;
}

export interface NamespaceAdminDeps {
  registry: NamespaceRegistry;
  store: NamespaceStore;
  /** The barrier: everything under a namespace's prefix is removed through it. */
  storage: Pick<Physical, 'scanKeys' | 'delete'>;
  mounts: Pick<MountManager, 'loadNamespace' | 'unloadNamespace' | 'list'>;
  defaultMounts: DefaultMounts;
  policies: { ensureDefault(ns: Namespace): Promise<void> };
  leases: Pick<ExpirationManager, 'revokePrefix' | 'listPrefix'>;
  tokens: { revokeNamespace(namespaceId: string): Promise<number> };
  logger: Pick<CoreLogger, 'info' | 'warn' | 'error'>;
}

export function createNamespaceAdmin(deps: NamespaceAdminDeps): NamespaceAdmin {
  const running = new Map<string, Promise<void>>();

  /** Revokes every lease of the namespace through its engine; answers the ids of those still stored after that. */
  async function revokeLeases(ns: Namespace): Promise<string[]> {
    // Mount by mount first, while the engines that issued them are still mounted; then anything else left.
    const prefixes = [...deps.mounts.list('mounts', ns), ...deps.mounts.list('auth', ns)].map(routePath);
    for (const prefix of [...prefixes, ...(await deps.leases.listPrefix(ns.id, ''))]) {
      await deps.leases.revokePrefix(ns.id, prefix, { sync: true }).catch((err: unknown) => {
        deps.logger.warn('revoking the leases of a namespace mount failed', { namespace: ns.path, prefix, error: String(err) });
      });
    }
    return leaseIdsUnder(ns, '');
  }

  async function leaseIdsUnder(ns: Namespace, prefix: string): Promise<string[]> {
    const ids: string[] = [];
    for (const name of await deps.leases.listPrefix(ns.id, prefix)) {
      if (name.endsWith('/')) ids.push(...(await leaseIdsUnder(ns, `${prefix}${name}`)));
      else ids.push(`${prefix}${name}`);
    }
    return ids;
  }

  async function removeEverything(ns: Namespace): Promise<void> {
    const started = Date.now();
    const left = await revokeLeases(ns);
    if (left.length > 0) throw new Error(`${left.length} leases could not be revoked (${left.slice(0, 10).join(', ')})`);
    const tokens = await deps.tokens.revokeNamespace(ns.id);
    await deps.mounts.unloadNamespace(ns);
    const prefix = deps.registry.storagePrefix(ns);
    for await (const key of deps.storage.scanKeys(prefix)) await deps.storage.delete(key);
    await deps.store.remove(ns);
    deps.logger.info('namespace deleted', { namespace: ns.path, id: ns.id, tokens, ms: Date.now() - started });
  }

  function startDeletion(ns: Namespace): Promise<void> {
    const existing = running.get(ns.id);
    if (existing) return existing;
    deps.registry.hide(ns.id);
    const p = removeEverything(ns)
      .catch((err: unknown) => deps.logger.error('deleting a namespace failed; it resumes at the next unseal', { namespace: ns.path, error: String(err) }))
      .finally(() => running.delete(ns.id));
    running.set(ns.id, p);
    return p;
  }

  const children = (parent: Namespace) => deps.store.children(parent);

  return {
    async create(parent, name, customMetadata) {
      const { namespace, created } = await deps.store.create(parent, name, customMetadata);
      if (created) {
        await deps.policies.ensureDefault(namespace);
        await deps.mounts.loadNamespace(namespace, deps.defaultMounts);
      }
      return namespace;
    },
    patch: (ns, changes) => deps.store.patch(ns, changes),
    async delete(ns) {
      const below = deps.registry.all().filter((n) => n.id !== ns.id && n.path.startsWith(ns.path));
      if (below.length > 0) throw badRequest(`namespace "${ns.path}" has child namespaces (${below.map((n) => n.path).join(', ')}); delete them first`);
      const left = await revokeLeases(ns);
      if (left.length > 0) {
        const named = left.slice(0, 10).join(', ') + (left.length > 10 ? `, and ${left.length - 10} more` : '');
        throw badRequest(
          `namespace "${ns.path}" was not deleted: ${left.length} of its leases could not be revoked (${named}); ` +
            'fix what refuses them and delete again, or remove them for good with sys/leases/revoke-force',
        );
      }
      await deps.store.markDeleting(ns);
      void startDeletion(ns);
    },
    children,
    find: (path) => deps.registry.byPath(path) ?? deps.store.deleting().find((n) => n.path === path),
    resumeDeletions() {
      for (const ns of deps.store.deleting()) void startDeletion(ns);
    },
    async idle() {
      await Promise.all([...running.values()]);
    },
  };
}
