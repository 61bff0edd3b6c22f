/** `read`, `write`, `patch`, `list`, `delete` and `path-help`: the path-level verbs of the Vault CLI. */
import { parseData, UsageError } from './args.js';
import { boolFlag, CliError, ensureOk, printKeys, printResponse, type Command } from './command.js';

const query = (pairs: string[]): Record<string, string> | undefined => {
  if (!pairs.length) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(parseData(pairs))) out[k] = Array.isArray(v) ? v.join(',') : String(v);
  return out;
};

export const genericVerbs: Record<string, Command> = {
  read: {
    usage: '[options] PATH [K=V...]',
    synopsis: 'Read data at PATH and print it. K=V pairs are sent as query parameters.',
    min: 1,
    async run(ctx) {
      const [path, ...pairs] = ctx.args.positionals;
      const r = await ctx.client.read(path!, query(pairs));
      if (r.status === 404 && !r.body?.errors?.length) throw new CliError(`No value found at ${path}`, 2);
      ensureOk(r, `reading ${path}`);
      if (r.status === 204 || !r.body) throw new CliError(`No value found at ${path}`, 2);
      // A path that answers a bare object (sys/health, sys/seal-status) shows its fields as the data.
      const bare = typeof r.body === 'object' && !Array.isArray(r.body) && !('request_id' in r.body);
      printResponse(ctx, r, bare ? { data: r.body as Record<string, unknown> } : {});
    },
  },
  write: {
    usage: '[options] PATH [DATA K=V...]',
    synopsis: 'Write data to PATH. Data: K=V pairs (K=@file reads a file, K=- stdin), @file.json, or - for JSON on stdin.',
    flags: { force: { kind: 'bool', help: 'Allow writing no data (for endpoints that take none).', aliases: ['f'] } },
    min: 1,
    async run(ctx) {
      const [path, ...pairs] = ctx.args.positionals;
      if (!pairs.length && !boolFlag(ctx, 'force')) throw new UsageError('Must supply data or use -force');
      const r = await ctx.client.write(path!, parseData(pairs));
      ensureOk(r, `writing data to ${path}`);
      printResponse(ctx, r, { fallback: `Success! Data written to: ${path}` });
    },
  },
  patch: {
    usage: '[options] PATH [DATA K=V...]',
    synopsis: 'Patch data at PATH (HTTP PATCH, JSON merge patch): only the given keys change.',
    flags: { force: { kind: 'bool', help: 'Allow patching with no data.', aliases: ['f'] } },
    min: 1,
    async run(ctx) {
      const [path, ...pairs] = ctx.args.positionals;
      if (!pairs.length && !boolFlag(ctx, 'force')) throw new UsageError('Must supply data or use -force');
      const r = await ctx.client.patch(path!, parseData(pairs));
      ensureOk(r, `patching data at ${path}`);
      printResponse(ctx, r, { fallback: `Success! Data patched at: ${path}` });
    },
  },
  list: {
    usage: '[options] PATH',
    synopsis: 'List the keys under PATH.',
    min: 1,
    max: 1,
    async run(ctx) {
      const path = ctx.args.positionals[0]!;
      const r = await ctx.client.list(path.replace(/\/?$/, '/'));
      if (r.status === 404) throw new CliError(`No value found at ${path}`, 2);
      ensureOk(r, `listing ${path}`);
      printKeys(ctx, (r.body?.data?.keys ?? []) as string[]);
    },
  },
  scan: {
    usage: '[options] PATH',
    synopsis: 'Every key below PATH at any depth, relative to it (SCAN, paged by the server).',
    min: 1,
    max: 1,
    async run(ctx) {
      const path = ctx.args.positionals[0]!;
      const r = await ctx.client.scan(path.replace(/\/?$/, '/'));
      if (r.status === 404) throw new CliError(`No value found at ${path}`, 2);
      ensureOk(r, `scanning ${path}`);
      printKeys(ctx, r.keys);
    },
  },
  delete: {
    usage: '[options] PATH [K=V...]',
    synopsis: 'Delete data at PATH. K=V pairs are sent as query parameters.',
    output: false,
    min: 1,
    async run(ctx) {
      const [path, ...pairs] = ctx.args.positionals;
      const r = await ctx.client.delete(path!, query(pairs));
      ensureOk(r, `deleting ${path}`);
      ctx.out(`Success! Data deleted (if it existed) at: ${path}`);
    },
  },
  'path-help': {
    usage: '[options] PATH',
    synopsis: 'Print the help of a path: what it does and its fields.',
    output: false,
    min: 1,
    max: 1,
    async run(ctx) {
      const path = ctx.args.positionals[0]!;
      const r = await ctx.client.read(path, { help: '1' });
      ensureOk(r, `retrieving help for ${path}`);
      const help = r.body?.help;
      ctx.out(typeof help === 'string' && help ? help : JSON.stringify(r.body, null, 2));
    },
  },
};
