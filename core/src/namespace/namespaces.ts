/**
 * Namespace resolution. Namespaces are designed in from the start so nothing
 * stored ever needs migrating: the root namespace stores at the top level,
 * every other namespace under `namespaces/<id>/` with the same layout, and its
 * id is suffixed to the token and lease ids made inside it.
 *
 * Resolution rule (spec "Common rules"): the namespace header and the request
 * path are joined, and the longest existing namespace prefix of the joined path
 * is the namespace; the rest is the path inside it.
 */
export interface Namespace {
  /** "root" for the root namespace; a short random id otherwise. */
  id: string;
  /** "" for root, else "ns1/" or "ns1/ns2/" (always ends in '/'). */
  path: string;
  customMetadata: Record<string, string>;
}

export const ROOT_NAMESPACE: Namespace = Object.freeze({ id: 'root', path: '', customMetadata: {} }) as Namespace;

export interface NamespaceRegistry {
  resolve(joinedPath: string): { namespace: Namespace; path: string };
  byId(id: string): Namespace | undefined;
  byPath(path: string): Namespace | undefined;
  add(ns: Namespace): void;
  remove(id: string): void;
  /**
   * A namespace being deleted: it no longer resolves (requests into it see no
   * namespace, byPath misses it), while byId still finds it for the clean-up.
   */
  hide(id: string): void;
  all(): Namespace[];
  /** Storage prefix of a namespace: "" for root, "namespaces/<id>/" otherwise. */
  storagePrefix(ns: Namespace): string;
}

export function createNamespaceRegistry(): NamespaceRegistry {
  const byPath = new Map<string, Namespace>([['', ROOT_NAMESPACE]]);
  const byId = new Map<string, Namespace>([[ROOT_NAMESPACE.id, ROOT_NAMESPACE]]);
  const hidden = new Set<string>();
  return {
    resolve(joinedPath) {
      // Only the root namespace: the common case costs one size check.
      if (byPath.size === 1) return { namespace: ROOT_NAMESPACE, path: joinedPath };
      let best = ROOT_NAMESPACE;
      let idx = joinedPath.indexOf('/');
      while (idx !== -1) {
        const candidate = byPath.get(joinedPath.slice(0, idx + 1));
        if (!candidate) break; // namespaces nest, so a missing parent ends the walk
        best = candidate;
        idx = joinedPath.indexOf('/', idx + 1);
      }
      return { namespace: best, path: joinedPath.slice(best.path.length) };
    },
    byId: (id) => byId.get(id),
    byPath: (p) => byPath.get(normalizeNamespacePath(p)),
    add(ns) {
      if (!hidden.has(ns.id)) byPath.set(ns.path, ns);
      byId.set(ns.id, ns);
    },
    remove(id) {
      const ns = byId.get(id);
      if (!ns || ns.id === ROOT_NAMESPACE.id) return;
      byId.delete(id);
      hidden.delete(id);
      if (byPath.get(ns.path)?.id === id) byPath.delete(ns.path);
    },
    hide(id) {
      const ns = byId.get(id);
      if (!ns || ns.id === ROOT_NAMESPACE.id) return;
      hidden.add(id);
      if (byPath.get(ns.path)?.id === id) byPath.delete(ns.path);
    },
    all: () => [...byId.values()],
    storagePrefix: (ns) => namespaceStoragePrefix(ns.id),
  };
}

/** Where a namespace's own tree is stored: "" for root ('' or 'root'), "namespaces/<id>/" otherwise. */
export function namespaceStoragePrefix(namespaceId: string): string {
  return namespaceId === ROOT_NAMESPACE.id || namespaceId === '' ? '' : `namespaces/${namespaceId}/`;
}

/** "ns1/ns2" or "/ns1/ns2/" -> "ns1/ns2/"; "" stays "". */
export function normalizeNamespacePath(p: string): string {
  const trimmed = p.split('/').filter((s) => s.length > 0).join('/');
  return trimmed === '' ? '' : `${trimmed}/`;
}

/** Whether `candidateId` names a namespace strictly below `ancestorId` ('' is the root). */
export function isDescendantNamespace(registry: Pick<NamespaceRegistry, 'byId'>, ancestorId: string, candidateId: string): boolean {
  const a = registry.byId(ancestorId || ROOT_NAMESPACE.id);
  const c = registry.byId(candidateId || ROOT_NAMESPACE.id);
  return a !== undefined && c !== undefined && c.id !== a.id && c.path.startsWith(a.path);
}

/**
 * Whether something of namespace `ownerId` (a token, a lease) may be acted on
 * by its id or accessor from a request made in `requestNs`: only from its own
 * namespace or one above it ('' is the root). A namespace never reaches a
 * parent's or a sibling's, and the caller must answer as for an unknown id.
 */
export function isWithinNamespace(registry: Pick<NamespaceRegistry, 'byId'>, requestNs: Namespace, ownerId: string): boolean {
  const owner = registry.byId(ownerId || ROOT_NAMESPACE.id);
  return owner !== undefined && owner.path.startsWith(requestNs.path);
}

/**
 * Where a token may act, and with which policies (Vault's rule): in its own
 * namespace and the namespaces below it, always with its own namespace's
 * policies, on the path as seen from its own namespace (`child/secret/x` for a
 * parent-namespace token acting in `child/`). Null when the request's namespace
 * is not the token's nor below it, or the token's namespace is gone: refuse.
 */

export function tokenScope(
  registry: Pick<NamespaceRegistry, 'byId'>,
  tokenNamespaceId: string,
  requestNamespace: Namespace,
  path: string,
): { namespace: Namespace; path: string } | null {
  const own = registry.byId(tokenNamespaceId);
  if (!own || !requestNamespace.path.startsWith(own.path)) return null;
  return { namespace: own, path: requestNamespace.path.slice(own.path.length) + path };
}
