/** `audit enable|disable|list`. */
import { pairsOf } from './args.js';
import { boolFlag, ensureOk, flag, printData, trail, type Command } from './command.js';
import { columns } from './output.js';

export const auditVerbs: Record<string, Command> = {
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
};
