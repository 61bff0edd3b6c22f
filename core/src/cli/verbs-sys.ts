/** `secrets ...`, `auth ...`, `audit ...`, `policy ...`, `plugin ...`, `lease ...` and `namespace ...`. */
import { readFileSync, writeFileSync } from 'node:fs';
import { pairsOf, readSource, UsageError, type FlagSpec } from './args.js';
import { boolFlag, CliError, commaList, ensureOk, flag, printData, printKeys, printResponse, type Command, type Ctx } from './command.js';
import { columns } from './output.js';
import type { HclObject, HclValue } from '../hcl/parse.js';

const trail = (p: string) => p.replace(/^\/+/, '').replace(/\/?$/, '/');

/** Mount settings shared by `secrets enable|tune` and `auth enable|tune`, as Vault names them. */
const TUNE_FLAGS: FlagSpec = {
  description: { kind: 'string', help: 'Human-friendly description.' },
  'default-lease-ttl': { kind: 'string', help: 'Default lease TTL of the mount (e.g. 1h).' },
  'max-lease-ttl': { kind: 'string', help: 'Maximum lease TTL of the mount.' },
  'audit-non-hmac-request-keys': { kind: 'list', help: 'Request key logged in clear by audit devices.' },
  'audit-non-hmac-response-keys': { kind: 'list', help: 'Response key logged in clear by audit devices.' },
  'listing-visibility': { kind: 'string', help: '"unauth" or "hidden".' },
  'plugin-version': { kind: 'string', help: 'Plugin version to run.' },
  options: { kind: 'list', help: 'A K=V option passed to the engine (e.g. version=2).' },
};

const ENABLE_FLAGS: FlagSpec = {
  ...TUNE_FLAGS,
  path: { kind: 'string', help: 'Mount path. Default: the type.' },
  'force-no-cache': { kind: 'bool', help: 'Do not cache this mount\'s reads.' },
  local: { kind: 'bool', help: 'Local mount (not replicated).' },
  'seal-wrap': { kind: 'bool', help: 'Seal-wrap the mount\'s critical values.' },
};

function mountConfig(ctx: Ctx): Record<string, unknown> {
  const c: Record<string, unknown> = {};
  const f = ctx.args.flags;
  if (f.has('default-lease-ttl')) c.default_lease_ttl = f.get('default-lease-ttl');
  if (f.has('max-lease-ttl')) c.max_lease_ttl = f.get('max-lease-ttl');
  if (f.has('force-no-cache')) c.force_no_cache = f.get('force-no-cache') === 'true';
  if (f.has('listing-visibility')) c.listing_visibility = f.get('listing-visibility');
  if (ctx.args.lists.has('audit-non-hmac-request-keys')) c.audit_non_hmac_request_keys = commaList(ctx, 'audit-non-hmac-request-keys');
  if (ctx.args.lists.has('audit-non-hmac-response-keys')) c.audit_non_hmac_response_keys = commaList(ctx, 'audit-non-hmac-response-keys');
  return c;
}

function enable(kind: 'secrets' | 'auth'): Command {
  const base = kind === 'secrets' ? 'sys/mounts' : 'sys/auth';
  return {
    usage: '[options] TYPE',
    synopsis: kind === 'secrets' ? 'Enable a secrets engine at a path.' : 'Enable an auth method at a path.',
    flags: kind === 'secrets' ? { ...ENABLE_FLAGS, version: { kind: 'string', help: 'KV version (shorthand for -options=version=N).' } } : ENABLE_FLAGS,
    output: false,
    min: 1,
    max: 1,
    async run(ctx) {
      const type = ctx.args.positionals[0]!;
      const path = trail(flag(ctx, 'path') ?? type);
      const options = pairsOf(ctx.args.lists.get('options'));
      if (flag(ctx, 'version')) options.version = flag(ctx, 'version')!;
      const body: Record<string, unknown> = { type, description: flag(ctx, 'description') ?? '', config: mountConfig(ctx), options, local: boolFlag(ctx, 'local'), seal_wrap: boolFlag(ctx, 'seal-wrap') };
      if (flag(ctx, 'plugin-version')) body.plugin_version = flag(ctx, 'plugin-version');
      const r = await ctx.client.write(`${base}/${path}`, body);
      ensureOk(r, 'enabling');
      ctx.out(kind === 'secrets' ? `Success! Enabled the ${type} secrets engine at: ${path}` : `Success! Enabled ${type} auth method at: ${path}`);
    },
  };
}

function disable(kind: 'secrets' | 'auth'): Command {
  return {
    usage: '[options] PATH',
    synopsis: kind === 'secrets' ? 'Disable the secrets engine at PATH: its leases are revoked and its data removed.' : 'Disable the auth method at PATH: its tokens are revoked.',
    output: false,
    min: 1,
    max: 1,
    async run(ctx) {
      const path = trail(ctx.args.positionals[0]!);
      const r = await ctx.client.delete(`${kind === 'secrets' ? 'sys/mounts' : 'sys/auth'}/${path}`);
      ensureOk(r, 'disabling');
      ctx.out(kind === 'secrets' ? `Success! Disabled the secrets engine (if it existed) at: ${path}` : `Success! Disabled the auth method (if it existed) at: ${path}`);
    },
  };
}

function listMounts(kind: 'secrets' | 'auth'): Command {
  return {
    usage: '[options]',
    synopsis: kind === 'secrets' ? 'List the enabled secrets engines.' : 'List the enabled auth methods.',
    flags: { detailed: { kind: 'bool', help: 'Show TTLs, options, versions and more.' } },
    max: 0,
    async run(ctx) {
      const r = await ctx.client.read(kind === 'secrets' ? 'sys/mounts' : 'sys/auth');
      ensureOk(r, `listing ${kind === 'secrets' ? 'secrets engines' : 'auth methods'}`);
      const data = (r.body?.data ?? {}) as Record<string, any>;
      printData(ctx, data, () => {
        const detailed = boolFlag(ctx, 'detailed');
        const head = detailed ? ['Path', 'Plugin', 'Accessor', 'Default TTL', 'Max TTL', 'Options', 'Version', 'Description'] : ['Path', 'Type', 'Accessor', 'Description'];
        const rows = Object.keys(data)
          .sort()
          .map((p) => {
            const m = data[p];
            return detailed
              ? [p, m.type, m.accessor, m.config?.default_lease_ttl || 'system', m.config?.max_lease_ttl || 'system', m.options ?? {}, m.running_plugin_version || m.plugin_version || 'n/a', m.description || 'n/a']
              : [p, m.type, m.accessor, m.description || 'n/a'];
          });
        columns(ctx.out, [head, ...rows]);
      });
    },
  };
}

function tune(kind: 'secrets' | 'auth'): Command {
  return {
    usage: '[options] PATH',
    synopsis: kind === 'secrets' ? 'Change the settings of a secrets engine.' : 'Change the settings of an auth method.',
    flags: TUNE_FLAGS,
    output: false,
    min: 1,
    max: 1,
    async run(ctx) {
      const path = trail(ctx.args.positionals[0]!);
      const body: Record<string, unknown> = mountConfig(ctx);
      if (flag(ctx, 'description') !== undefined) body.description = flag(ctx, 'description');
      if (flag(ctx, 'plugin-version') !== undefined) body.plugin_version = flag(ctx, 'plugin-version');
      if (ctx.args.lists.has('options')) body.options = pairsOf(ctx.args.lists.get('options'));
      const r = await ctx.client.write(`${kind === 'secrets' ? 'sys/mounts' : 'sys/auth'}/${path}tune`, body);
      ensureOk(r, 'tuning');
      ctx.out(`Success! Tuned the ${kind === 'secrets' ? 'secrets engine' : 'auth method'} at: ${path}`);
    },
  };
}

/** Canonical HCL of a policy document, as `policy fmt` writes it. */
function formatPolicy(text: string): string {
  // Loaded here: only `policy fmt` needs the parsers.
  const { blocksOf, parseHcl } = require('../hcl/parse.js') as typeof import('../hcl/parse.js');
  const { parsePolicy } = require('../policy/policy.js') as typeof import('../policy/policy.js');
  parsePolicy('fmt', text); // validates capabilities and parameters, not only the syntax
  const doc = parseHcl(text, { source: 'policy' });
  const out: string[] = [];
  const value = (v: HclValue, indent: string): string => {
    if (Array.isArray(v)) return `[${v.map((x) => value(x, indent)).join(', ')}]`;
    if (v !== null && typeof v === 'object') {
      const keys = Object.keys(v);
      if (!keys.length) return '{}';
      return `{\n${keys.map((k) => `${indent}  ${JSON.stringify(k)} = ${value(v[k]!, `${indent}  `)}`).join('\n')}\n${indent}}`;
    }
    return JSON.stringify(v);
  };
  for (const key of Object.keys(doc)) {
    const blocks = blocksOf(doc[key], 1);
    if (!blocks) throw new UsageError(`policy: "${key}" must be a block like ${key} "..." { ... }`);
    for (const b of blocks) {
      out.push(`${key} ${JSON.stringify(b.labels[0])} {`);
      for (const [k, v] of Object.entries(b.body as HclObject)) out.push(`  ${k} = ${value(v, '  ')}`);
      out.push('}', '');
    }
  }
  return out.join('\n');
}

const leaseVerbs: Record<string, Command> = {
  'lease lookup': {
    usage: '[options] LEASE_ID',
    synopsis: 'Show a lease: issue and expiry times, TTL, whether it is renewable.',
    min: 1,
    max: 1,
    async run(ctx) {
      const r = await ctx.client.put('sys/leases/lookup', { lease_id: ctx.args.positionals[0] });
      ensureOk(r, 'looking up lease');
      printResponse(ctx, r);
    },
  },
  'lease renew': {
    usage: '[options] LEASE_ID',
    synopsis: 'Renew a lease.',
    flags: { increment: { kind: 'string', help: 'TTL requested from now (e.g. 1h).', aliases: ['i'] } },
    min: 1,
    max: 1,
    async run(ctx) {
      const body: Record<string, unknown> = { lease_id: ctx.args.positionals[0] };
      if (flag(ctx, 'increment') !== undefined) body.increment = flag(ctx, 'increment');
      const r = await ctx.client.put('sys/leases/renew', body);
      ensureOk(r, 'renewing lease');
      printResponse(ctx, r);
    },
  },
  'lease revoke': {
    usage: '[options] LEASE_ID | PREFIX',
    synopsis: 'Revoke a lease, or every lease under a prefix (-prefix); -force drops them even when the engine fails to revoke.',
    flags: {
      prefix: { kind: 'bool', help: 'The argument is a prefix: revoke every lease under it.' },
      force: { kind: 'bool', help: 'With -prefix: remove the leases even if the engine cannot revoke them. Dangerous.', aliases: ['f'] },
      sync: { kind: 'bool', help: 'Wait for the revocation to finish.' },
    },
    output: false,
    min: 1,
    max: 1,
    async run(ctx) {
      const id = ctx.args.positionals[0]!;
      const prefix = boolFlag(ctx, 'prefix');
      const force = boolFlag(ctx, 'force');
      if (force && !prefix) throw new UsageError('-force requires -prefix');
      const q = ctx.args.flags.has('sync') ? { sync: flag(ctx, 'sync')! } : undefined;
      const path = force ? `sys/leases/revoke-force/${id}` : prefix ? `sys/leases/revoke-prefix/${id}` : 'sys/leases/revoke';
      const r = await ctx.client.request('PUT', path, prefix ? {} : { lease_id: id }, q);
      ensureOk(r, 'revoking');
      ctx.out(force ? `Success! Force revoked any leases with prefix: ${id}` : prefix ? `Success! Revoked any leases with prefix: ${id}` : `Success! Revoked lease: ${id}`);
    },
  },
};

const namespaceVerbs: Record<string, Command> = {
  'namespace list': {
    usage: '[options]',
    synopsis: 'List the child namespaces of the current namespace.',
    flags: { detailed: { kind: 'bool', help: 'Show ids and metadata.' } },
    max: 0,
    async run(ctx) {
      const r = await ctx.client.list('sys/namespaces');
      if (r.status === 404) throw new CliError('No namespaces found', 2);
      ensureOk(r, 'listing namespaces');
      if (boolFlag(ctx, 'detailed')) return printResponse(ctx, r, { data: r.body?.data?.key_info ?? {} });
      printKeys(ctx, (r.body?.data?.keys ?? []) as string[]);
    },
  },
  'namespace create': {
    usage: '[options] PATH',
    synopsis: 'Create a namespace under the current one.',
    flags: { 'custom-metadata': { kind: 'list', help: 'A K=V pair of custom metadata.' } },
    min: 1,
    max: 1,
    async run(ctx) {
      const body = ctx.args.lists.has('custom-metadata') ? { custom_metadata: pairsOf(ctx.args.lists.get('custom-metadata')) } : {};
      const r = await ctx.client.put(`sys/namespaces/${ctx.args.positionals[0]}`, body);
      ensureOk(r, 'creating namespace');
      printResponse(ctx, r, { fallback: `Success! Namespace created at: ${trail(ctx.args.positionals[0]!)}` });
    },
  },
  'namespace patch': {
    usage: '[options] PATH',
    synopsis: 'Change the custom metadata of a namespace.',
    flags: {
      'custom-metadata': { kind: 'list', help: 'A K=V pair to set.' },
      'remove-custom-metadata': { kind: 'list', help: 'A key to remove.' },
    },
    min: 1,
    max: 1,
    async run(ctx) {
      const meta: Record<string, string | null> = pairsOf(ctx.args.lists.get('custom-metadata'));
      for (const k of ctx.args.lists.get('remove-custom-metadata') ?? []) meta[k] = null;
      const r = await ctx.client.patch(`sys/namespaces/${ctx.args.positionals[0]}`, { custom_metadata: meta });
      ensureOk(r, 'patching namespace');
      printResponse(ctx, r, { fallback: `Success! Namespace patched at: ${trail(ctx.args.positionals[0]!)}` });
    },
  },
  'namespace delete': {
    usage: '[options] PATH',
    synopsis: 'Delete a namespace and everything in it.',
    output: false,
    min: 1,
    max: 1,
    async run(ctx) {
      const r = await ctx.client.delete(`sys/namespaces/${ctx.args.positionals[0]}`);
      ensureOk(r, 'deleting namespace');
      ctx.out(`Success! Namespace deleted at: ${trail(ctx.args.positionals[0]!)}`);
    },
  },
  'namespace lookup': {
    usage: '[options] PATH',
    synopsis: 'Show a namespace: its id, path and metadata.',
    min: 1,
    max: 1,
    async run(ctx) {
      const r = await ctx.client.read(`sys/namespaces/${ctx.args.positionals[0]}`);
      if (r.status === 404) throw new CliError(`Namespace not found: ${ctx.args.positionals[0]}`, 2);
      ensureOk(r, 'looking up namespace');
      printResponse(ctx, r);
    },
  },
};

export const sysVerbs: Record<string, Command> = {
  'secrets enable': enable('secrets'),
  'secrets disable': disable('secrets'),
  'secrets list': listMounts('secrets'),
  'secrets tune': tune('secrets'),
  'secrets move': {
    usage: '[options] SOURCE DESTINATION',
    synopsis: 'Move a secrets engine to a new path; its leases move with it (sys/remount).',
    output: false,
    min: 2,
    max: 2,
    async run(ctx) {
      const [from, to] = ctx.args.positionals.map((p) => trail(p!));
      const r = await ctx.client.write('sys/remount', { from, to });
      ensureOk(r, 'moving mount');
      const id = r.body?.migration_id as string | undefined;
      // Vault moves asynchronously and answers a migration id; poll until it settles.
      for (let i = 0; id && i < 600; i++) {
        const s = await ctx.client.read(`sys/remount/status/${id}`);
        ensureOk(s, 'checking the move');
        const status = s.body?.data?.migration_info?.status as string | undefined;
        if (status === 'success') break;
        if (status === 'failure') throw new CliError(`Error moving mount: the move from ${from} to ${to} failed`, 2);
        await new Promise((res) => setTimeout(res, 100));
      }
      ctx.out(`Success! Finished moving secrets engine ${from} to ${to}`);
    },
  },
  'auth enable': enable('auth'),
  'auth disable': disable('auth'),
  'auth list': listMounts('auth'),
  'auth tune': tune('auth'),
  'audit enable': {
    usage: '[options] TYPE [K=V...]',
    synopsis: 'Enable an audit device (e.g. file file_path=/var/log/strongroom-audit.log).',
    flags: {
      path: { kind: 'string', help: 'Path of the device. Default: the type.' },
      description: { kind: 'string', help: 'Human-friendly description.' },
      local: { kind: 'bool', help: 'Local device (not replicated).' },
    },
    output: false,
    min: 1,
    async run(ctx) {
      const [type, ...pairs] = ctx.args.positionals;
      const path = trail(flag(ctx, 'path') ?? type!);
      const r = await ctx.client.put(`sys/audit/${path}`, { type, description: flag(ctx, 'description') ?? '', local: boolFlag(ctx, 'local'), options: pairsOf(pairs) });
      ensureOk(r, 'enabling audit device');
      ctx.out(`Success! Enabled the ${type} audit device at: ${path}`);
    },
  },
  'audit disable': {
    usage: '[options] PATH',
    synopsis: 'Disable the audit device at PATH.',
    output: false,
    min: 1,
    max: 1,
    async run(ctx) {
      const path = trail(ctx.args.positionals[0]!);
      const r = await ctx.client.delete(`sys/audit/${path}`);
      ensureOk(r, 'disabling audit device');
      ctx.out(`Success! Disabled audit device (if it was enabled) at: ${path}`);
    },
  },
  'audit list': {
    usage: '[options]',
    synopsis: 'List the enabled audit devices.',
    flags: { detailed: { kind: 'bool', help: 'Show the devices\' options.' } },
    max: 0,
    async run(ctx) {
      const r = await ctx.client.read('sys/audit');
      ensureOk(r, 'listing audit devices');
      const data = (r.body?.data ?? r.body ?? {}) as Record<string, any>;
      printData(ctx, data, () => {
        const paths = Object.keys(data).sort();
        if (!paths.length) return ctx.out('No audit devices are enabled.');
        const detailed = boolFlag(ctx, 'detailed');
        columns(ctx.out, [detailed ? ['Path', 'Type', 'Description', 'Options'] : ['Path', 'Type', 'Description'], ...paths.map((p) => (detailed ? [p, data[p].type, data[p].description || 'n/a', data[p].options ?? {}] : [p, data[p].type, data[p].description || 'n/a']))]);
      });
    },
  },
  'policy write': {
    usage: '[options] NAME PATH',
    synopsis: 'Upload an ACL policy from a file (or - for stdin).',
    output: false,
    min: 2,
    max: 2,
    async run(ctx) {
      const [name, file] = ctx.args.positionals;
      let text: string;
      try {
        text = readSource(file!);
      } catch (err) {
        throw new CliError(`Error opening policy file: ${err instanceof Error ? err.message : String(err)}`, 1);
      }
      const r = await ctx.client.put(`sys/policies/acl/${name}`, { policy: text });
      ensureOk(r, 'uploading policy');
      ctx.out(`Success! Uploaded policy: ${name}`);
    },
  },
  'policy read': {
    usage: '[options] NAME',
    synopsis: 'Print an ACL policy.',
    min: 1,
    max: 1,
    async run(ctx) {
      const name = ctx.args.positionals[0]!;
      const r = await ctx.client.read(`sys/policies/acl/${name}`);
      if (r.status === 404) throw new CliError(`No policy named: ${name}`, 2);
      ensureOk(r, 'reading policy');
      if (ctx.field || ctx.format !== 'table') return printResponse(ctx, r);
      ctx.out(String(r.body.data.policy));
    },
  },
  'policy list': {
    usage: '[options]',
    synopsis: 'List the ACL policies.',
    max: 0,
    async run(ctx) {
      const r = await ctx.client.list('sys/policies/acl');
      ensureOk(r, 'listing policies');
      const keys = (r.body?.data?.keys ?? []) as string[];
      if (ctx.format !== 'table' || ctx.field) return printKeys(ctx, keys);
      for (const k of keys) ctx.out(k);
    },
  },
  'policy delete': {
    usage: '[options] NAME',
    synopsis: 'Delete an ACL policy; tokens holding it lose its rights at once.',
    output: false,
    min: 1,
    max: 1,
    async run(ctx) {
      const name = ctx.args.positionals[0]!;
      const r = await ctx.client.delete(`sys/policies/acl/${name}`);
      ensureOk(r, 'deleting policy');
      ctx.out(`Success! Deleted policy: ${name}`);
    },
  },
  'policy fmt': {
    usage: '[options] PATH',
    synopsis: 'Rewrite a policy file in canonical HCL, after checking it parses (local; no server call).',
    output: false,
    min: 1,
    max: 1,
    async run(ctx) {
      const file = ctx.args.positionals[0]!;
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch (err) {
        throw new CliError(`Error opening policy file: ${err instanceof Error ? err.message : String(err)}`, 1);
      }
      let formatted: string;
      try {
        formatted = formatPolicy(text);
      } catch (err) {
        throw new CliError(`Error parsing policy: ${err instanceof Error ? err.message : String(err)}`, 1);
      }
      writeFileSync(file, formatted);
      ctx.out(`Success! Formatted policy: ${file}`);
    },
  },
  'plugin register': {
    usage: '-sha256=HEX [options] TYPE NAME',
    synopsis: 'Register a plugin binary in the catalog (TYPE: secret, auth or database).',
    flags: {
      sha256: { kind: 'string', help: 'SHA-256 of the binary (required).' },
      command: { kind: 'string', help: 'Binary in the plugin directory. Default: NAME.' },
      args: { kind: 'list', help: 'Argument passed to the plugin (comma-separated or repeated).' },
      env: { kind: 'list', help: 'A K=V environment variable for the plugin.' },
      version: { kind: 'string', help: 'Semantic version of the plugin.' },
    },
    output: false,
    min: 2,
    max: 2,
    async run(ctx) {
      const [type, name] = ctx.args.positionals;
      if (!flag(ctx, 'sha256')) throw new UsageError('-sha256 is required');
      const body: Record<string, unknown> = { sha256: flag(ctx, 'sha256'), command: flag(ctx, 'command') ?? name };
      if (flag(ctx, 'version')) body.version = flag(ctx, 'version');
      if (ctx.args.lists.has('args')) body.args = commaList(ctx, 'args');
      if (ctx.args.lists.has('env')) body.env = ctx.args.lists.get('env');
      const r = await ctx.client.put(`sys/plugins/catalog/${type}/${name}`, body);
      ensureOk(r, 'registering plugin');
      ctx.out(`Success! Registered plugin: ${name}`);
    },
  },
  'plugin deregister': {
    usage: '[options] TYPE NAME',
    synopsis: 'Remove a plugin (or one -version of it) from the catalog.',
    flags: { version: { kind: 'string', help: 'The version to remove.' } },
    output: false,
    min: 2,
    max: 2,
    async run(ctx) {
      const [type, name] = ctx.args.positionals;
      const v = flag(ctx, 'version');
      const r = await ctx.client.delete(`sys/plugins/catalog/${type}/${name}`, v ? { version: v } : undefined);
      ensureOk(r, 'deregistering plugin');
      ctx.out(`Success! Deregistered plugin (if it was registered): ${name}`);
    },
  },
  'plugin list': {
    usage: '[options] [TYPE]',
    synopsis: 'List the plugins in the catalog, all or of one TYPE (secret, auth, database).',
    flags: { detailed: { kind: 'bool', help: 'Show versions, builtin and deprecation status.' } },
    max: 1,
    async run(ctx) {
      const type = ctx.args.positionals[0];
      if (type && !['secret', 'auth', 'database'].includes(type)) throw new UsageError(`unknown plugin type "${type}" (secret, auth or database)`);
      if (type && !boolFlag(ctx, 'detailed')) {
        const r = await ctx.client.list(`sys/plugins/catalog/${type}`);
        ensureOk(r, 'listing plugins');
        const names = (r.body?.data?.keys ?? []) as string[];
        return printData(ctx, names, () => columns(ctx.out, [['Name'], ...names.map((n) => [n])]));
      }
      const r = await ctx.client.read('sys/plugins/catalog');
      ensureOk(r, 'listing plugins');
      const detailed = ((r.body?.data?.detailed ?? []) as Array<{ name: string; type: string; version: string; builtin?: boolean; deprecation_status?: string }>).filter((p) => !type || p.type === type);
      if (boolFlag(ctx, 'detailed') || ctx.format !== 'table' || ctx.field) {
        return printData(ctx, detailed, () =>
          columns(ctx.out, [['Name', 'Type', 'Version', 'Builtin', 'Deprecation Status'], ...detailed.map((p) => [p.name, p.type, p.version || 'n/a', p.builtin ?? false, p.deprecation_status || 'n/a'])]),
        );
      }
      columns(ctx.out, [['Name', 'Type', 'Version'], ...detailed.map((p) => [p.name, p.type, p.version || 'n/a'])]);
    },
  },
  'plugin info': {
    usage: '[options] TYPE NAME',
    synopsis: 'Show a catalog entry: command, sha256, version.',
    flags: { version: { kind: 'string', help: 'The version to show.' } },
    min: 2,
    max: 2,
    async run(ctx) {
      const [type, name] = ctx.args.positionals;
      const v = flag(ctx, 'version');
      const r = await ctx.client.read(`sys/plugins/catalog/${type}/${name}`, v ? { version: v } : undefined);
      if (r.status === 404) throw new CliError(`No plugin named ${name} of type ${type}`, 2);
      ensureOk(r, 'reading plugin');
      printResponse(ctx, r);
    },
  },
  'plugin reload': {
    usage: '-plugin=NAME | -mounts=PATH[,PATH] [options]',
    synopsis: 'Restart the processes of a plugin (every mount running it) or of the given mounts.',
    flags: {
      plugin: { kind: 'string', help: 'Reload every mount running this plugin.' },
      mounts: { kind: 'list', help: 'Reload these mounts (comma-separated or repeated).' },
      scope: { kind: 'string', help: 'Empty (this node) or "global".' },
    },
    max: 0,
    async run(ctx) {
      const plugin = flag(ctx, 'plugin');
      const mounts = commaList(ctx, 'mounts');
      if (!plugin === !mounts.length) throw new UsageError('give exactly one of -plugin or -mounts');
      const body: Record<string, unknown> = plugin ? { plugin } : { mounts };
      if (flag(ctx, 'scope')) body.scope = flag(ctx, 'scope');
      const r = await ctx.client.put('sys/plugins/reload/backend', body);
      ensureOk(r, 'reloading plugin');
      printResponse(ctx, r, { fallback: plugin ? `Success! Reloaded plugin: ${plugin}` : `Success! Reloaded mounts: ${mounts.join(', ')}` });
    },
  },
  ...leaseVerbs,
  ...namespaceVerbs,
};
