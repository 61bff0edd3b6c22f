/**
 * Connections: config/:name, config/ (list), reset/:name, rotate-root/:name.
 *
 * Never returned: the connection's password (nor any other credential field
 * of the plugin's details) and a password inside connection_url. A rotated
 * root password is stored (encrypted by the barrier) and never answered.
 * rotate-root and its crash recovery are root-rotation.ts; config writes and
 * reset settle a rotation a crash cut short before they read the config.
 */
import { badRequest, definePath, f, notFound, redactCredentials, type HandlerRequest, type PathDef } from '@strongroom/sdk-plugin';
import type { EngineDeps } from '../deps.js';
import type { ConnectionConfig } from '../store.js';

const engineFields = {
  plugin_name: f.string().describe('The database plugin, e.g. postgresql-database-plugin').optional(),
  plugin_version: f.string().describe('Semantic version of the plugin to pin; empty for the built-in').optional(),
  verify_connection: f.bool().describe('Verify the connection on configuration (default true)').optional(),
  allowed_roles: f.commaList().describe('Roles allowed to use this connection; "*" allows any').optional(),
  root_rotation_statements: f.commaList().describe('Statements run to rotate the root credentials').optional(),
  password_policy: f.string().describe('Password policy for generated passwords; empty for the built-in default').optional(),
};

/** Common plugin fields, declared for help and validation; everything else in the body passes through to the plugin too. */
const pluginFields = {
  connection_url: f.string().describe('Connection string; may template {{username}} and {{password}}').optional(),
  username: f.string().describe('Root user').optional(),
  password: f.sensitive(f.string().describe('Root password; never returned')).optional(),
  disable_escaping: f.bool().describe('Do not escape special characters in username and password').optional(),
  max_open_connections: f.int({ min: 0 }).describe('Maximum open connections to the database').optional(),
  max_idle_connections: f.int({ min: 0 }).describe('Maximum idle connections').optional(),
  max_connection_lifetime: f.duration().describe('Maximum lifetime of a connection').optional(),
  username_template: f.string().describe('Template for generated usernames').optional(),
};

const ENGINE_KEYS = new Set(['name', ...Object.keys(engineFields)]);
export function configPaths(deps: EngineDeps): PathDef[] {
  const { store, connections } = deps;

  const list = definePath({
    pattern: 'config/',
    synopsis: 'List the configured connections.',
    operations: {
      list: {
        summary: 'Names of the connections.',
        handler: () => store.configs.list(),
      },
    },
  });

  const config: PathDef = definePath({
    pattern: 'config/:name',
    fields: { name: f.string().describe('Connection name'), ...engineFields, ...pluginFields },
    arbitraryInput: true,
    synopsis: 'Configure a connection to a database.',
    description: CONFIG_HELP,
    existenceCheck: async (req) => (await store.configs.get(req.data.name)) !== null,
    operations: {
      read: {
        summary: 'Read a connection (without its password).',
        handler: async (req) => {
          const c = await store.configs.get(req.data.name);
          if (!c) return null;
          return {
            data: {
              plugin_name: c.plugin_name,
              plugin_version: c.plugin_version,
              // What serves the connection in this engine now ("v0.1.0+builtin" for the built-in; "" before its first use).
              running_plugin_version: connections.servingVersion(c.name),
              verify_connection: c.verify_connection,
              allowed_roles: c.allowed_roles,
              root_credentials_rotate_statements: c.root_rotation_statements,
              password_policy: c.password_policy,
              connection_details: redactCredentials(c.connection_details),
            },
          };
        },
      },
      create: { summary: 'Create a connection.', handler: (req) => write(req) },
      update: { summary: 'Update a connection; fields not sent keep their values.', handler: (req) => write(req) },
      delete: {
        summary: 'Delete a connection (roles using it stop working).',
        handler: async (req) =>
          deps.rootRotation.locked(req.data.name, async () => {
            await connections.close(req.data.name);
            // The connection and an unfinished root rotation of it go together.
            await store.records.batch([store.configs.deleteOp(req.data.name), store.rootWals.deleteOp(req.data.name)]);
            await deps.rootRotation.discard(req.data.name);
            return null;
          }),
      },
    },
  });

  type WriteReq = Pick<HandlerRequest, 'provided' | 'raw'> & { data: { name: string } };
  const write = (req: WriteReq): Promise<null> =>
    deps.rootRotation.locked(String(req.data.name), async () => {
      const d = req.data as Record<string, unknown>;
      const has = (k: string) => req.provided.has(k) && d[k] !== undefined;
      const name = String(d.name);
      // A password sent now replaces whatever a cut-short rotation left; otherwise that is settled first (the kept password must be the live one).
      if (has('password')) await deps.rootRotation.discard(name);
      else await deps.rootRotation.settle(name);
      const existing = await store.configs.get(name);
      const pluginName = has('plugin_name') ? String(d.plugin_name) : existing?.plugin_name;
      if (!pluginName) throw badRequest('plugin_name: missing required field');
      const details: Record<string, unknown> = { ...(existing?.connection_details ?? {}) };
      // Plugin fields: declared ones as parsed, undeclared ones as sent.
      const raw = req.raw.data ?? {};
      for (const k of Object.keys(raw)) {
        if (ENGINE_KEYS.has(k) || k === '__proto__') continue;
        details[k] = Object.hasOwn(pluginFields, k) ? d[k] : raw[k];
      }
      const cfg: ConnectionConfig = {
        name,
        plugin_name: pluginName,
        plugin_version: has('plugin_version') ? canonical(String(d.plugin_version)) : (existing?.plugin_version ?? ''),
        verify_connection: has('verify_connection') ? Boolean(d.verify_connection) : (existing?.verify_connection ?? true),
        allowed_roles: has('allowed_roles') ? (d.allowed_roles as string[]) : (existing?.allowed_roles ?? []),
        root_rotation_statements: has('root_rotation_statements') ? (d.root_rotation_statements as string[]) : (existing?.root_rotation_statements ?? []),
        password_policy: has('password_policy') ? String(d.password_policy) : (existing?.password_policy ?? ''),
        connection_details: details,
      };
      cfg.connection_details = await connections.configure(cfg, cfg.verify_connection);
      await store.configs.put(cfg.name, cfg);
      return null;
    });

  const reset = definePath({
    pattern: 'reset/:name',
    fields: { name: f.string().describe('Connection name') },
    synopsis: 'Close the connection and open it again with its stored configuration.',
    operations: {
      update: {
        summary: 'Reset a connection.',
        handler: async (req) =>
          deps.rootRotation.locked(req.data.name, async () => {
            await deps.rootRotation.settle(req.data.name);
            const cfg = await store.configs.get(req.data.name);
            if (!cfg) throw notFound(`connection "${req.data.name}" does not exist`);
            await connections.close(cfg.name);
            await connections.configure(cfg, false);
            return null;
          }),
      },
    },
  });

  const rotateRoot = definePath({
    pattern: 'rotate-root/:name',
    fields: { name: f.string().describe('Connection name') },
    synopsis: "Rotate the root user's password; the new one is stored and never returned.",
    operations: {
      update: {
        summary: 'Rotate the root credentials.',
        handler: async (req) =>
          deps.rootRotation.locked(req.data.name, async () => {
            await deps.rootRotation.rotate(req.data.name);
            return null;
          }),
      },
    },
  });

  return [list, config, reset, rotateRoot];
}

function canonical(version: string): string {
  if (version === '') return '';
  return version.startsWith('v') ? version : `v${version}`;
}

const CONFIG_HELP = `Configures a connection: the database plugin that serves it (plugin_name,
optionally pinned to plugin_version), which roles may use it (allowed_roles,
"*" for any), and the plugin's own fields (connection_url, username, password,
...), which are passed to the plugin as they are. The password is never
returned.`;
