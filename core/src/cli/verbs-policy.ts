/** `policy write|read|list|delete|fmt`. */
import { readFileSync, writeFileSync } from 'node:fs';
import { readSource } from './args.js';
import { CliError, ensureOk, printKeys, printResponse, type Command } from './command.js';
import { formatPolicy } from './policy-format.js';

export const policyVerbs: Record<string, Command> = {
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
};
