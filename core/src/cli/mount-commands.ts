/** `secrets enable|disable|list|tune` and `auth enable|disable|list|tune`: one command each, for either mount table. */
import { pairsOf, type FlagSpec } from './args.js';
import { boolFlag, commaList, ensureOk, flag, printData, trail, type Command, type Ctx } from './command.js';
import { columns } from './output.js';

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

export function enable(kind: 'secrets' | 'auth'): Command {
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

export function disable(kind: 'secrets' | 'auth'): Command {
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

export function listMounts(kind: 'secrets' | 'auth'): Command {
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

export function tune(kind: 'secrets' | 'auth'): Command {
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
