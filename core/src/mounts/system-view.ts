/**
 * The SystemView each mount's backend gets (over the plugin transport for
 * plugin processes): its TTLs, password generation from the mount's
 * namespace's policies, the core's version and, for the database engine
 * only, resolving a database plugin in the catalog (starting the process of
 * an external version; the built-in runs inside the engine); and publishing
 * the engine's change events, stamped with the mount and its namespace.
 */
import { StrongroomError, badRequest, type EventMetadata, type SystemView } from '@strongroom/sdk-plugin/host';
import { z } from 'zod';
import type { EventHub } from '../events/hub.js';
import type { MountBinding } from './mount-manager.js';
import { routePath, type MountEntry, type Router } from './mount-table.js';
import type { NamespaceRegistry } from '../namespace/namespaces.js';
import type { PasswordPolicyStore } from '../password-policy/store.js';
import { isSemver, type PluginCatalog, type PluginEntry } from '../catalog/catalog.js';
import type { PluginSupervisor } from '../supervisor/supervisor.js';

export interface SystemViewDeps {
  router: Router<MountBinding>;
  namespaces: NamespaceRegistry;
  ttls(entry: MountEntry | undefined): { defaultTtl: number; maxTtl: number };
  /** Null while sealed. */
  passwordPolicies(): PasswordPolicyStore | null;
  /** Null while sealed; set early in an unseal, as plugins may call back before it completes. */
  plugins(): { catalog: PluginCatalog; supervisor: PluginSupervisor } | null;
  version: string;
  events: Pick<EventHub, 'publish'>;
}

/** Types the core publishes itself: no engine may forge them. */
const CORE_EVENT_PREFIXES = ['lease/', 'mount/', 'policy/', 'gap', 'dropped', 'end'];
const engineEventSchema = z.object({
  type: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_.-]*\/[a-z0-9_.-]+$/, 'event type: "<engine>/<action>" in lower case (kv-v2/data-write)')
    .max(128)
    .refine((t) => !CORE_EVENT_PREFIXES.some((p) => t.startsWith(p)), 'event type: lease/, mount/ and policy/ events are the core\'s'),
  path: z.string().max(1024, 'event path: at most 1024 characters').refine((p) => !p.split('/').includes('..'), 'event path: no ".." segment'),
  metadata: z
    .record(z.string().max(64), z.union([z.string().max(1024), z.number(), z.boolean()]))
    .refine((m) => Object.keys(m).length <= 32, 'event metadata: at most 32 keys'),
});

export function createSystemViews(deps: SystemViewDeps): (uuid: string) => SystemView {
  const { router, namespaces } = deps;
  return (uuid) => ({
    defaultLeaseTtl: async () => deps.ttls(router.byUuid(uuid)?.entry).defaultTtl,
    maxLeaseTtl: async () => deps.ttls(router.byUuid(uuid)?.entry).maxTtl,
    generatePasswordFromPolicy: async (name) => {
      const store = deps.passwordPolicies();
      if (!store) throw new StrongroomError('unavailable', 'Vault is sealed');
      const found = router.byUuid(uuid);
      const ns = found ? namespaces.byId(found.entry.namespace_id) : undefined;
      if (!ns) throw new StrongroomError('unavailable', 'the mount is gone');
      const password = await store.generate(ns, name);
      if (password === null) throw badRequest(`password_policy: password policy "${name}" does not exist`);
      return password;
    },
    coreVersion: async () => deps.version,
    openDatabasePlugin: async (name, version) => {
      if (router.byUuid(uuid)?.entry.type !== 'database') throw new StrongroomError('permission_denied', 'only the database engine may open database plugins');
      const plugins = deps.plugins();
      if (!plugins) throw new StrongroomError('unavailable', 'Vault is sealed');
      const entry = await resolveDatabasePlugin(plugins.catalog, name, version);
      // The built-in ships inside the database engine and runs in its process (DESIGN §3): nothing to start.
      if (entry.builtin) return { socketPath: '', secret: '', version: entry.version, builtin: true };
      return plugins.supervisor.openDatabase(entry);
    },
    sendEvent: async (type: string, path: string, metadata: EventMetadata = {}) => {
      const parsed = engineEventSchema.safeParse({ type, path, metadata });
      if (!parsed.success) throw badRequest(parsed.error.issues[0]!.message);
      const found = router.byUuid(uuid);
      const ns = found ? namespaces.byId(found.entry.namespace_id) : undefined;
      if (!found || !ns) throw new StrongroomError('unavailable', 'the mount is gone');
      const mount = routePath(found.entry);
      deps.events.publish({ type, namespaceId: ns.id, namespacePath: ns.path, mount, path: `${mount}${path.replace(/^\/+/, '')}`, metadata: parsed.data.metadata });
    },
  });
}

/** A connection's plugin_name and plugin_version -> the catalog entry; 400s name the field. */
async function resolveDatabasePlugin(catalog: Pick<PluginCatalog, 'get' | 'list'>, name: string, version: string): Promise<PluginEntry> {
  if (version !== '' && !isSemver(version)) throw badRequest(`plugin_version: "${version}" is not a semantic version`);
  if (version !== '') {
    const entry = await catalog.get('database', name, version);
    if (!entry) throw badRequest(`plugin_version: version ${version} of database plugin "${name}" is not registered`);
    return entry;
  }
  const all = (await catalog.list('database')).filter((e) => e.name === name);
  const entry = all.find((e) => e.builtin) ?? (all.length === 1 ? all[0] : undefined);
  if (entry) return entry;
  if (all.length === 0) throw badRequest(`plugin_name: no database plugin named "${name}" is registered`);
  throw badRequest(`plugin_version: several versions of "${name}" are registered and none is built in; pin one`);
}
