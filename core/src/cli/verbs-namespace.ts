/** `namespace list|create|patch|delete|lookup`. */
import { pairsOf } from './args.js';
import { boolFlag, CliError, ensureOk, printKeys, printResponse, trail, type Command } from './command.js';

export const namespaceVerbs: Record<string, Command> = {
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
