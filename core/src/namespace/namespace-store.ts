/**
 * Namespaces at rest: one record per namespace at `core/namespaces/<id>` in
 * the root namespace's barrier (id, path, custom metadata), loaded into the
 * registry at unseal, parents before children. A namespace's own data lives
 * under `namespaces/<id>/` (NamespaceRegistry.storagePrefix).
 *
 * Names follow Vault's rules: one path segment, no `..`, not a reserved word;
 * a namespace is created inside the request's namespace, which must exist.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { badRequest, notFound } from '@strongroom/sdk-plugin/host';
import type { Physical } from '../storage/physical.js';
import type { Namespace, NamespaceRegistry } from './namespaces.js';

const RECORDS = 'core/namespaces/';
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** Path segments that name core endpoints or the root: never a namespace. */
const RESERVED = new Set(['root', 'sys', 'audit', 'auth', 'cubbyhole', 'identity']);
/** One segment of letters, digits, `_`, `-` and `.`, as Vault allows (but never `.` or `..` alone). */
const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

const recordSchema = z.object({
  id: z.string(),
  path: z.string(),
  custom_metadata: z.record(z.string(), z.string()),
  /** Set before a deletion starts, so one a crash cut short resumes at load. */
  deleting: z.boolean().optional(),
});

export interface NamespaceStore {
  /** Reads every namespace into the registry (parents first). */
  load(): Promise<void>;
  /** Creates `name` inside `parent`; an existing one is returned as it is (Vault's create is idempotent). */
  create(parent: Namespace, name: string, customMetadata: Record<string, string>): Promise<{ namespace: Namespace; created: boolean }>;
  /** Merges metadata: a key set to null is removed (JSON merge patch). */
  patch(ns: Namespace, changes: Record<string, string | null>): Promise<Namespace>;
  /** Marks the record as being deleted and hides the namespace from resolution. */
  markDeleting(ns: Namespace): Promise<void>;
  /** Namespaces whose deletion was started and not finished (found at load or marked since). */
  deleting(): Namespace[];
  /** Removes the record and the registry entry; the caller has removed everything inside first. */
  remove(ns: Namespace): Promise<void>;
  /** The namespaces directly below `parent`. */
  children(parent: Namespace): Namespace[];
}

/** Throws a 400 naming the problem when `name` cannot be a namespace. */
function validateNamespaceName(name: string): void {
  if (name.includes('/')) throw badRequest(`path: a namespace name is one path segment, got "${name}"`);
  if (name === '' || name === '.' || name === '..' || !NAME.test(name)) throw badRequest(`path: "${name}" is not a valid namespace name (letters, digits, "_", "-", ".")`);
  if (RESERVED.has(name.toLowerCase())) throw badRequest(`path: "${name}" is a reserved name`);
}

export function createNamespaceStore(deps: { store: Pick<Physical, 'get' | 'put' | 'delete' | 'list' | 'scan'>; registry: NamespaceRegistry }): NamespaceStore {
  const { store, registry } = deps;

  const beingDeleted = new Map<string, Namespace>();
  const save = (ns: Namespace) =>
    store.put(RECORDS + ns.id, Buffer.from(JSON.stringify({ id: ns.id, path: ns.path, custom_metadata: ns.customMetadata, ...(beingDeleted.has(ns.id) ? { deleting: true } : {}) })));

  function newId(): string {
    const bytes = randomBytes(5);
    let id = '';
    for (const b of bytes) id += BASE62[b % 62];
    return registry.byId(id) ? newId() : id;
  }

  return {
    async load() {
      const loaded: Namespace[] = [];
      for await (const { value } of store.scan(RECORDS)) {
        const r = recordSchema.parse(JSON.parse(Buffer.from(value).toString('utf8')));
        const ns = { id: r.id, path: r.path, customMetadata: r.custom_metadata };
        loaded.push(ns);
        if (r.deleting) beingDeleted.set(ns.id, ns);
      }
      // Parents before children: resolution walks a path one existing level at a time.
      for (const ns of loaded.sort((a, b) => a.path.split('/').length - b.path.split('/').length)) {
        registry.add(ns);
        if (beingDeleted.has(ns.id)) registry.hide(ns.id);
      }
    },
    async create(parent, name, customMetadata) {
      validateNamespaceName(name);
      const path = `${parent.path}${name}/`;
      const existing = registry.byPath(path);
      if (existing) return { namespace: existing, created: false };
      if ([...beingDeleted.values()].some((n) => n.path === path)) throw badRequest(`path: namespace "${path}" is being deleted; try again when it is gone`);
      const ns: Namespace = { id: newId(), path, customMetadata: { ...customMetadata } };
      await save(ns);
      registry.add(ns);
      return { namespace: ns, created: true };
    },
    async patch(ns, changes) {
      const meta = { ...ns.customMetadata };
      for (const [k, v] of Object.entries(changes)) {
        if (v === null) delete meta[k];
        else meta[k] = v;
      }
      const next: Namespace = { ...ns, customMetadata: meta };
      await save(next);
      registry.add(next);
      return next;
    },
    async markDeleting(ns) {
      beingDeleted.set(ns.id, ns);
      await save(ns);
      registry.hide(ns.id);
    },
    deleting: () => [...beingDeleted.values()],
    async remove(ns) {
      if (!registry.byId(ns.id)) throw notFound(`namespace "${ns.path}" does not exist`);
      await store.delete(RECORDS + ns.id);
      registry.remove(ns.id);
      beingDeleted.delete(ns.id);
    },
    children: (parent) =>
      registry
        .all()
        .filter((n) => n.id !== parent.id && !beingDeleted.has(n.id) && n.path.startsWith(parent.path) && n.path.slice(parent.path.length).split('/').length === 2)
        .sort((a, b) => (a.path < b.path ? -1 : 1)),
  };
}
