/** `lease lookup|renew|revoke`. */
import { UsageError } from './args.js';
import { boolFlag, ensureOk, flag, printResponse, type Command } from './command.js';

export const leaseVerbs: Record<string, Command> = {
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
