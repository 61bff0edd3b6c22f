/**
 * Cubbyholes: every service token's private kv store at `cubbyhole/`, one
 * mount in each namespace (Vault's and OpenBao's built-in). Owned by the core
 * because only the core knows who the caller's token is.
 *
 * What must stay true:
 * - a token's entries live in the cubbyhole mount's storage (behind the
 *   barrier) under `<token HMAC>/`: the token id itself is never in a key;
 * - a request reaches only its own token's folder: the folder comes from the
 *   token entry the core looked up, never from anything the request names;
 * - the entries go with the token: the token store's `onDestroy` calls
 *   `destroy`, which clears the folder in the token's namespace and in every
 *   namespace below it (where the token may act, so may have written too).
 */
import type { MountBinding } from '../mounts/mount-manager.js';
import { storagePrefixOf, type Router } from '../mounts/mount-table.js';
import { isWithinNamespace, ROOT_NAMESPACE, type NamespaceRegistry } from '../namespace/namespaces.js';
import type { KeyValueStore } from '../storage/keys.js';
import { createView, type StorageView } from '../storage/view.js';
import type { TokenEntry } from '../token/index.js';

/** Where every namespace has its cubbyhole (not movable). */
export const CUBBYHOLE_MOUNT_PATH = 'cubbyhole/';
export const CUBBYHOLE_TYPE = 'cubbyhole';
/** Keys deleted per storage batch when a cubbyhole goes. */
const DELETE_BATCH = 500;

export interface Cubbyholes {
  /** A token's cubbyhole in the mount `mountUuid`; null when no such mount is bound. */
  ofMount(mountUuid: string, tokenKey: string): StorageView | null;
  /** A token's cubbyhole in a namespace; null when the namespace has no cubbyhole bound (yet). */
  inNamespace(namespaceId: string, tokenKey: string): StorageView | null;
  /** Deletes everything a token kept in any cubbyhole it could reach. */
  destroy(entry: Pick<TokenEntry, 'key' | 'namespaceId'>): Promise<void>;
}

export function createCubbyholes(deps: { store: KeyValueStore; router: Pick<Router<MountBinding>, 'byUuid' | 'get'>; namespaces: Pick<NamespaceRegistry, 'byId' | 'all' | 'storagePrefix'> }): Cubbyholes {
  const { store, router, namespaces } = deps;

  function ofMount(mountUuid: string, tokenKey: string): StorageView | null {
    // An empty key would open the whole mount: every token's cubbyhole.
    if (tokenKey === '') throw new Error('cubbyhole: a token key is required');
    const found = router.byUuid(mountUuid);
    if (!found || found.entry.type !== CUBBYHOLE_TYPE) return null;
    const ns = namespaces.byId(found.entry.namespace_id);
    if (!ns) return null;
    return createView(store, `${storagePrefixOf(found.entry, namespaces.storagePrefix(ns))}${tokenKey}/`);
  }

  function inNamespace(namespaceId: string, tokenKey: string): StorageView | null {
    const found = router.get(namespaceId || ROOT_NAMESPACE.id, CUBBYHOLE_MOUNT_PATH);
    return found ? ofMount(found.entry.uuid, tokenKey) : null;
  }

  return {
    ofMount,
    inNamespace,
    async destroy(entry) {
      const home = namespaces.byId(entry.namespaceId || ROOT_NAMESPACE.id);
      if (!home) return;
      for (const ns of namespaces.all()) {
        if (!isWithinNamespace(namespaces, home, ns.id)) continue;
        const box = inNamespace(ns.id, entry.key);
        if (!box) continue;
        let keys: string[] = [];
        const flush = async () => {
          if (keys.length > 0) await box.batch(keys.map((key) => ({ type: 'delete' as const, key })));
          keys = [];
        };
        for await (const k of box.scanKeys('')) {
          keys.push(k);
          if (keys.length >= DELETE_BATCH) await flush();
        }
        await flush();
      }
    },
  };
}
