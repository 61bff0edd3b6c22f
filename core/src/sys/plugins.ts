/** sys/plugins/catalog(/:type(/:name)) and sys/plugins/reload/backend (Vault's documented API). */
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
  const reload = defineSysPath({
    rootOnly: true,
    pattern: 'plugins/reload/backend',
    fields: {
      plugin: f.string().optional().describe('Name of the plugin to reload.'),
      mounts: f.commaList().optional().describe('Mounts whose plugin to reload.'),
      scope: f.string().optional().describe('Only the local node is supported.'),
    },
    synopsis: 'Restart the processes of a plugin.',
    operations: {
      update: {
        summary: 'Reload a plugin by name or by mount.',
        handler: async (req) => {
          const names = new Set<string>();
          if (req.data.plugin) names.add(req.data.plugin);
          for (const m of req.data.mounts ?? []) {
            const mp = m.endsWith('/') ? m : `${m}/`;
            const entry = deps.mounts.list(mp.startsWith('auth/') ? 'auth' : 'mounts', deps.namespaces.byId('root')!).find((e) => (e.table === 'auth' ? `auth/${e.path}` : e.path) === mp);
            if (!entry) throw badRequest(`mounts: no mount at "${mp}"`);
            names.add(entry.type);
          }
          if (names.size === 0) throw badRequest('plugin: either plugin or mounts is required');
          for (const n of names) await deps.catalog.reload(n);
          return { data: { reload_id: req.raw.id } };
        },
      },
    },
  });
  return [all, byType, one, reload];
}
