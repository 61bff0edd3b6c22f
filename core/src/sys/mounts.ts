/**
 * sys/mounts and sys/auth: list, enable, read, disable and tune mounts
 * (Vault's documented API). Paths inside a table may contain slashes, so the
 * `/tune` suffix is recognised on the captured path.
 */
import { badRequest, f, notFound } from '@strongroom/sdk-plugin/host';
import { defineSysPath, type SysPathDef } from './sys-path.js';
import { randomUUID } from 'node:crypto';
import { routePath, type MountConfig, type MountEntry, type MountTableKind } from '../mounts/mount-table.js';
import type { SysDeps } from './deps.js';
import { namespaceOf } from './namespace-of.js';

const configFields = {
  default_lease_ttl: f.duration().optional().describe('Default lease TTL of the mount (seconds or duration string).'),
  max_lease_ttl: f.duration().optional().describe('Maximum lease TTL of the mount.'),
  force_no_cache: f.bool().optional(),
  audit_non_hmac_request_keys: f.commaList().optional(),
  audit_non_hmac_response_keys: f.commaList().optional(),
  listing_visibility: f.string().optional(),
  passthrough_request_headers: f.commaList().optional(),
  allowed_response_headers: f.commaList().optional(),
  token_type: f.string().optional(),
};

export function mountView(e: MountEntry, runningVersion: string) {
  return {
    accessor: e.accessor,
    config: {
      default_lease_ttl: e.config.default_lease_ttl,
      max_lease_ttl: e.config.max_lease_ttl,
      force_no_cache: e.config.force_no_cache,
      ...(e.config.audit_non_hmac_request_keys.length ? { audit_non_hmac_request_keys: e.config.audit_non_hmac_request_keys } : {}),
      ...(e.config.audit_non_hmac_response_keys.length ? { audit_non_hmac_response_keys: e.config.audit_non_hmac_response_keys } : {}),
      ...(e.config.listing_visibility ? { listing_visibility: e.config.listing_visibility } : {}),
      ...(e.config.token_type ? { token_type: e.config.token_type } : {}),
    },
    description: e.description,
    external_entropy_access: e.external_entropy_access,
    local: e.local,
    options: Object.keys(e.options).length ? e.options : null,
    plugin_version: e.plugin_version,
    running_plugin_version: runningVersion,
    running_sha256: '',
    seal_wrap: e.seal_wrap,
    type: e.type,
    uuid: e.uuid,
  };
}

function splitTune(path: string): { path: string; tune: boolean } {
  const trimmed = path.replace(/\/+$/, '');
  return trimmed.endsWith('/tune') ? { path: trimmed.slice(0, -'/tune'.length), tune: true } : { path: trimmed, tune: false };
}

function tableFields() {
  return {
    path: f.string().describe('Mount path (may contain slashes); append /tune for the tune endpoint.'),
    type: f.string().optional().describe('Type of the backend, such as "kv" or "transit".'),
    description: f.string().optional().describe('Human-friendly description of the mount.'),
    config: f.map().optional().describe('Configuration: default_lease_ttl, max_lease_ttl, audit_non_hmac_*_keys, listing_visibility, ...'),
    options: f.map(f.string()).optional().describe('Engine options, e.g. {"version": "2"} for kv.'),
    plugin_version: f.string().optional().describe('Semantic version of the plugin to pin.'),
    local: f.bool().optional(),
    seal_wrap: f.bool().optional(),
    external_entropy_access: f.bool().optional(),
    ...configFields,
  };
}

function parseConfig(raw: Record<string, unknown> | undefined, top: Record<string, unknown>): Partial<MountConfig> {
  const src = { ...(raw ?? {}) };
  for (const k of Object.keys(configFields)) if (top[k] !== undefined) src[k] = top[k];
  const out: Partial<MountConfig> = {};
  const schema = configFields as Record<string, { safeParse(v: unknown): { success: boolean; data?: unknown } }>;
  for (const [k, v] of Object.entries(src)) {
    const s = schema[k];
    // null means "not set", as for a missing key (clients send null for every option they were not given).
    if (!s || v === null) continue;
    const r = s.safeParse(v);
    if (!r.success) throw badRequest(`config.${k}: invalid value`);
    (out as Record<string, unknown>)[k] = r.data;
  }
  if (out.default_lease_ttl && out.max_lease_ttl && out.default_lease_ttl > out.max_lease_ttl) {
    throw badRequest('config.default_lease_ttl: cannot be greater than max_lease_ttl');
  }
  return out;
}

function tablePaths(deps: SysDeps, table: MountTableKind, prefix: 'mounts' | 'auth'): SysPathDef[] {
  const list = defineSysPath({
    rootOnly: false,
    pattern: prefix,
    synopsis: table === 'auth' ? 'List the enabled auth methods.' : 'List the mounted secrets engines.',
    operations: {
      read: {
        summary: 'List mounts with their configuration.',
        handler: async (req) => {
          const ns = namespaceOf(deps, req.mount);
          const data: Record<string, unknown> = {};
          for (const e of deps.mounts.list(table, ns)) data[e.path] = mountView(e, deps.mounts.runningVersion(e.uuid));
          return { data };
        },
      },
    },
  });
  const one = defineSysPath({
    rootOnly: false,
    pattern: `${prefix}/*path`,
    fields: tableFields(),
    synopsis: table === 'auth' ? 'Enable, read, tune or disable an auth method.' : 'Mount, read, tune or unmount a secrets engine.',
    operations: {
      read: {
        summary: 'Read the configuration of a mount (or its tune values with /tune).',
        handler: async (req) => {
          const ns = namespaceOf(deps, req.mount);
          const { path, tune } = splitTune(req.data.path);
          const e = deps.mounts.get(table, ns, path);
          if (!e) throw notFound(`no mount at "${path}/"`);
          if (!tune) return { data: mountView(e, deps.mounts.runningVersion(e.uuid)) };
          // The effective values, as Vault answers them: the system's where the mount sets none.
          const ttls = deps.ttlsOf(e);
          return {
            data: {
              description: e.description,
              default_lease_ttl: ttls.defaultTtl,
              max_lease_ttl: ttls.maxTtl,
              force_no_cache: e.config.force_no_cache,
              options: e.options,
              plugin_version: e.plugin_version,
              ...(e.config.audit_non_hmac_request_keys.length ? { audit_non_hmac_request_keys: e.config.audit_non_hmac_request_keys } : {}),
              ...(e.config.audit_non_hmac_response_keys.length ? { audit_non_hmac_response_keys: e.config.audit_non_hmac_response_keys } : {}),
              ...(e.config.listing_visibility ? { listing_visibility: e.config.listing_visibility } : {}),
            },
          };
        },
      },
      update: {
        summary: 'Enable a mount, or tune it with /tune.',
        handler: async (req) => {
          const ns = namespaceOf(deps, req.mount);
          const { path, tune } = splitTune(req.data.path);
          const d = req.data;
          const config = parseConfig(d.config as Record<string, unknown> | undefined, tune ? (req.raw.data as Record<string, unknown>) : {});
          if (tune) {
            await deps.mounts.tune(table, ns, path, {
              config,
              ...(d.description !== undefined ? { description: d.description } : {}),
              ...(d.options ? { options: d.options as Record<string, string> } : {}),
              ...(d.plugin_version !== undefined ? { plugin_version: d.plugin_version } : {}),
            });
            return null;
          }
          if (!d.type) throw badRequest('type: a mount type is required');
          const options = { ...((d.options as Record<string, string> | undefined) ?? {}) };
          // `kv-v2` is the documented alias for kv with options.version=2; `generic`, Vault's old name of kv, is kv version 1.
          let type = d.type;
          if (type === 'kv-v2') {
            type = 'kv';
            options.version = '2';
          } else if (type === 'generic' && table === 'mounts') {
            type = 'kv';
            options.version ??= '1';
          }
          await deps.mounts.enable(table, ns, path, {
            type,
            options,
            config,
            ...(d.description !== undefined ? { description: d.description } : {}),
            ...(d.plugin_version ? { plugin_version: d.plugin_version } : {}),
            ...(d.local !== undefined ? { local: d.local } : {}),
            ...(d.seal_wrap !== undefined ? { seal_wrap: d.seal_wrap } : {}),
            ...(d.external_entropy_access !== undefined ? { external_entropy_access: d.external_entropy_access } : {}),
          });
          return null;
        },
      },
      delete: {
        summary: 'Disable the mount; its leases are revoked and its data removed.',
        handler: async (req) => {
          const ns = namespaceOf(deps, req.mount);
          const { path, tune } = splitTune(req.data.path);
          if (tune) throw badRequest('path: cannot delete a tune endpoint');
          await deps.mounts.disable(table, ns, path);
          return null;
        },
      },
    },
  });
  return [list, one];
}

/**
 * sys/remount moves a mount at once; the migration record Vault's clients
 * poll (`sys/remount/status/:migration_id`) is kept in memory, the last
 * hundred of them.
 */
function remountPaths(deps: SysDeps): SysPathDef[] {
  const migrations = new Map<string, { migration_id: string; migration_info: { source_mount: string; target_mount: string; status: string } }>();
  return [
    defineSysPath({
      rootOnly: false,
      pattern: 'remount',
      fields: {
        from: f.string().describe('The mount to move ("auth/x" for an auth method).'),
        to: f.string().describe('The new path, in the same table.'),
      },
      synopsis: 'Move a mount, with its data, leases and tokens, to a new path.',
      operations: {
        update: {
          summary: 'Move a mount.',
          handler: async (req) => {
            const ns = namespaceOf(deps, req.mount);
            const moved = await deps.mounts.remount(ns, req.data.from, req.data.to);
            const id = randomUUID();
            migrations.set(id, { migration_id: id, migration_info: { source_mount: req.data.from, target_mount: routePath(moved), status: 'success' } });
            if (migrations.size > 100) migrations.delete(migrations.keys().next().value as string);
            return { data: { migration_id: id } };
          },
        },
      },
    }),
    defineSysPath({
      rootOnly: false,
      pattern: 'remount/status/:migration_id',
      fields: { migration_id: f.string().describe('The id sys/remount answered.') },
      synopsis: 'Status of a mount move.',
      operations: {
        read: {
          summary: 'Migration status.',
          handler: async (req) => {
            const m = migrations.get(req.data.migration_id);
            return m ? { data: { ...m, migration_info: { ...m.migration_info } } } : null;
          },
        },
      },
    }),
  ];
}

export function mountPaths(deps: SysDeps): SysPathDef[] {
  return [...tablePaths(deps, 'mounts', 'mounts'), ...tablePaths(deps, 'auth', 'auth'), ...remountPaths(deps)];
}
