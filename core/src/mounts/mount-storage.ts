/**
 * Each mount's one storage view over the barrier (under its uuid), opened on
 * first use and closed by the mount's disable, after which its data is wiped:
 * no write through the view (a plugin's background task, a straggler) lands
 * after the wipe (finding 8 of issue 11).
 */
import { StrongroomError, type Storage } from '@strongroom/sdk-plugin/host';
import type { NamespaceRegistry, Namespace } from '../namespace/namespaces.js';
import type { KeyValueStore } from '../storage/keys.js';
import { createClosableView, createView, type ClosableView } from '../storage/view.js';
import type { MountBinding } from './mount-manager.js';
import { storagePrefixOf, type MountEntry, type Router } from './mount-table.js';

export interface MountStorage {
  storageFor(uuid: string): Storage;
  /** Closes the mount's view, then deletes everything under its prefix. */
  wipe(entry: MountEntry, ns: Namespace): Promise<void>;
}

export function createMountStorage(deps: { store: KeyValueStore; router: Router<MountBinding>; namespaces: NamespaceRegistry }): MountStorage {
  const { store, router, namespaces } = deps;
  const open = new Map<string, ClosableView>();
  const gone = () => new StrongroomError('unsupported_path', 'the mount has been disabled');
  return {
    storageFor(uuid) {
      const view = open.get(uuid);
      if (view) return view;
      const found = router.byUuid(uuid);
      if (!found) throw new StrongroomError('unsupported_path', 'unknown mount');
      const ns = namespaces.byId(found.entry.namespace_id);
      const fresh = createClosableView(store, storagePrefixOf(found.entry, ns ? namespaces.storagePrefix(ns) : ''), gone);
      open.set(uuid, fresh);
      return fresh;
    },
    async wipe(entry, ns) {
      const view = open.get(entry.uuid);
      open.delete(entry.uuid);
      await view?.close();
      const all = createView(store, storagePrefixOf(entry, namespaces.storagePrefix(ns)));
      for await (const key of all.scanKeys('')) await all.delete(key);
    },
  };
}
