/** `plugin register|deregister|list|info|reload|reload-status`. */
import { UsageError } from './args.js';
import { boolFlag, CliError, commaList, ensureOk, flag, printData, printResponse, type Command } from './command.js';
import { columns } from './output.js';

export const pluginVerbs: Record<string, Command> = {
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
  'plugin reload-status': {
    usage: 'RELOAD_ID',
    synopsis: 'The outcome of a plugin reload, per node: when it finished and its error, if any.',
    min: 1,
    max: 1,
    async run(ctx) {
      const [id] = ctx.args.positionals;
      const r = await ctx.client.read('sys/plugins/reload/backend/status', { reload_id: id! });
      ensureOk(r, 'reading reload status');
      const data = (r.body?.data ?? {}) as { results?: Record<string, { timestamp: string; error: string }> };
      const rows = Object.entries(data.results ?? {}).map(([node, x]) => [x.timestamp, node, !x.error, x.error || '']);
      printData(ctx, data, () => columns(ctx.out, [['Time', 'Participant', 'Success', 'Message'], ...rows]));
    },
  },
};
