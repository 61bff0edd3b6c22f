/** sys/plugins/catalog(/:type(/:name)) and sys/plugins/reload/backend(/status) (Vault's documented API). */
import { randomUUID } from 'node:crypto';
import { badRequest, f, notFound, paginate } from '@strongroom/sdk-plugin/host';
import { defineSysPath, type SysPathDef } from './sys-path.js';
import type { SysDeps } from './deps.js';

const TYPES = ['secret', 'auth', 'database'] as const;

export function pluginPaths(deps: SysDeps): SysPathDef[] {
  const all = defineSysPath({
    rootOnly: true,
    pattern: 'plugins/catalog',
    synopsis: 'List every registered plugin.',
    operations: {
      read: {
        summary: 'Plugins by type, with details.',
        handler: async () => {
          const entries = await deps.catalog.list();
          const data: Record<string, unknown> = {};
          for (const t of TYPES) data[t] = [...new Set(entries.filter((e) => e.type === t).map((e) => e.name))].sort();
          data.detailed = entries.map((e) => ({ builtin: e.builtin, deprecation_status: e.builtin ? 'supported' : undefined, name: e.name, type: e.type, version: e.version, ...(e.builtin ? {} : { sha256: e.sha256 }) }));
          return { data };
        },
      },
    },
  });
  const byType = defineSysPath({
    rootOnly: true,
    pattern: 'plugins/catalog/:type',
    fields: { type: f.enum(TYPES).describe('Plugin type: secret, auth or database.') },
    synopsis: 'List the plugins of one type.',
    operations: {
      list: {
        summary: 'Names of the plugins of this type.',
        handler: async (req) => {
          const names = [...new Set((await deps.catalog.list(req.data.type)).map((e) => e.name))].sort();
          return { data: { keys: paginate(names, req.list.after, req.list.limit) } };
        },
      },
    },
  });
  const one = defineSysPath({
    rootOnly: true,
    pattern: 'plugins/catalog/:type/:name',
    fields: {
      type: f.enum(TYPES).describe('Plugin type.'),
      name: f.string().describe('Plugin name.'),
      version: f.string().optional().describe('Semantic version of the plugin.'),
      command: f.string().optional().describe('Command to run, a file name inside plugin_directory.'),
      args: f.commaList().optional().describe('Arguments for the command.'),
      env: f.commaList().optional().describe('Environment, as KEY=VALUE strings.'),
      sha256: f.string().optional().describe('SHA-256 of the command file, hex.'),
    },
    synopsis: 'Register, read or remove a plugin.',
    operations: {
      read: {
        summary: 'Read a registered plugin.',
        handler: async (req) => {
          const e = await deps.catalog.get(req.data.type, req.data.name, req.data.version);
          if (!e) throw notFound(`no plugin ${req.data.type}/${req.data.name}${req.data.version ? ` version ${req.data.version}` : ''}`);
          return { data: { name: e.name, type: e.type, version: e.version, command: e.builtin ? '' : e.command, args: e.builtin ? [] : e.args, sha256: e.builtin ? '' : e.sha256, builtin: e.builtin, deprecation_status: e.builtin ? 'supported' : undefined } };
        },
      },
      update: {
        summary: 'Register a plugin.',
        handler: async (req) => {
          const d = req.data;
          if (!d.sha256 || !/^[0-9a-fA-F]{64}$/.test(d.sha256)) throw badRequest('sha256: a hex SHA-256 of the command is required');
          if (!d.command) throw badRequest('command: required');
          await deps.catalog.register({ type: d.type, name: d.name, version: d.version ?? '', command: d.command, args: d.args ?? [], env: d.env ?? [], sha256: d.sha256.toLowerCase() });
          return null;
        },
      },
      delete: {
        summary: 'Remove a plugin from the catalog (built-ins cannot be removed).',
        handler: async (req) => {
          await deps.catalog.remove(req.data.type, req.data.name, req.data.version ?? '');
          return null;
        },
      },
    },
  });
  // The outcome of each reload, the last hundred, for sys/plugins/reload/backend/status (one node: one result each).
  const reloads = new Map<string, { timestamp: string; error: string }>();
  const node = () => deps.node.apiAddr || 'local';
  const reload = defineSysPath({
    rootOnly: true,
    pattern: 'plugins/reload/backend',
    fields: {
      plugin: f.string().optional().describe('Name of the plugin to reload.'),
      mounts: f.commaList().optional().describe('Mounts whose plugin to reload.'),
      scope: f.enum(['', 'global']).optional().describe('"global" to reload on every node; this server is the only node.'),
    },
    synopsis: 'Replace the processes of a plugin by fresh ones, without dropping a request.',
    operations: {
      update: {
        summary: 'Reload a plugin by name or by mount; answers once every mount runs on its new process.',
        handler: async (req) => {
          const targets = new Map<string, { name: string; version?: string }>();
          if (req.data.plugin) targets.set(req.data.plugin, { name: req.data.plugin });
          for (const m of req.data.mounts ?? []) {
            const mp = m.endsWith('/') ? m : `${m}/`;
            const entry = deps.mounts.list(mp.startsWith('auth/') ? 'auth' : 'mounts', deps.namespaces.byId('root')!).find((e) => (e.table === 'auth' ? `auth/${e.path}` : e.path) === mp);
            if (!entry) throw badRequest(`mounts: no mount at "${mp}"`);
            // The process serving that mount (and every other mount it serves): its version only.
            const version = deps.mounts.runningVersion(entry.uuid) || undefined;
            if (!targets.has(entry.type)) targets.set(`${entry.type}@${version ?? ''}`, { name: entry.type, ...(version ? { version } : {}) });
          }
          if (targets.size === 0) throw badRequest('plugin: either plugin or mounts is required');
          const id = randomUUID();
          try {
            for (const t of targets.values()) await deps.catalog.reload(t.name, t.version);
          } catch (err) {
            const message = err instanceof Error ? err.message : String(err);
            remember(id, message);
            throw badRequest(`reload ${id} failed, nothing was switched: ${message}`);
          }
          remember(id, '');
          return { data: { reload_id: id } };
        },
      },
    },
  });
  const remember = (id: string, error: string) => {
    reloads.set(id, { timestamp: new Date().toISOString(), error });
    if (reloads.size > 100) reloads.delete(reloads.keys().next().value as string);
  };
  const status = defineSysPath({
    rootOnly: true,
    pattern: 'plugins/reload/backend/status',
    fields: { reload_id: f.string().describe('The reload_id sys/plugins/reload/backend answered.') },
    synopsis: 'The outcome of a plugin reload.',
    operations: {
      read: {
        summary: 'Per node: when the reload finished and its error, if any.',
        handler: async (req) => {
          const r = reloads.get(req.data.reload_id);
          if (!r) throw notFound(`reload_id: no reload ${req.data.reload_id} (the last hundred are kept)`);
          return { data: { reload_id: req.data.reload_id, results: { [node()]: { ...r } } } };
        },
      },
    },
  });
  return [all, byType, one, reload, status];
}
