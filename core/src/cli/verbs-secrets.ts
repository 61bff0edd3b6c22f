/** `secrets enable|disable|list|tune|move`. */
import { CliError, ensureOk, trail, type Command } from './command.js';
import { disable, enable, listMounts, tune } from './mount-commands.js';

export const secretsVerbs: Record<string, Command> = {
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
};
