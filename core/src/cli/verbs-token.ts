/** `login`, `token ...` and `unwrap`. */
import { pairsOf, parseData, UsageError } from './args.js';
import { clientOptionsFromEnv, createClient, saveToken } from './client.js';
import { boolFlag, CliError, commaList, ensureOk, flag, printData, printResponse, type Command, type Ctx } from './command.js';
import { columns } from './output.js';
import { readSecret } from './secret-input.js';

/** Vault's -accessor switch: the argument is an accessor, not a token. */
const ACCESSOR = { accessor: { kind: 'bool' as const, help: 'The argument is a token accessor, not a token.' } };

const arg = (ctx: Ctx) => ctx.args.positionals[0];

/** Vault's line after a login; with -no-store it must not claim the token was kept. */
const authenticated = (stored: boolean) =>
  stored
    ? 'Success! You are now authenticated. The token information displayed below\nis already stored in the token helper.\n'
    : 'Success! You are now authenticated. The token was NOT stored (-no-store): pass it with\neach request (STRONGROOM_TOKEN) or log in again without -no-store.\n';

export const tokenVerbs: Record<string, Command> = {
  login: {
    usage: '[options] [TOKEN | K=V...]',
    synopsis: 'Authenticate and keep the token in ~/.strongroom-token (mode 0600). Default method: token (argument; else a hidden prompt on a terminal, or stdin).',
    flags: {
      method: { kind: 'string', help: 'Auth method type (token, approle, userpass...). Default: token.' },
      path: { kind: 'string', help: 'Mount path of the auth method. Default: the method type.' },
      'no-store': { kind: 'bool', help: 'Do not write the token to the token file.' },
    },
    async run(ctx) {
      const method = flag(ctx, 'method') ?? 'token';
      if (method === 'token') {
        const token = await readSecret(arg(ctx), 'Token (will be hidden): ', boolFlag(ctx, 'non-interactive'));
        if (!token) throw new UsageError('a token is required');
        const c = createClient({ ...clientOptionsFromEnv(ctx.args.flags), token });
        try {
          const r = await c.read('auth/token/lookup-self');
          ensureOk(r, 'logging in');
          const store = !boolFlag(ctx, 'no-store');
          if (store) saveToken(token);
          if (ctx.field || ctx.format !== 'table') {
            const d = r.body.data;
            return printResponse(ctx, { ...r, body: { auth: { client_token: token, accessor: d.accessor, lease_duration: d.ttl, renewable: d.renewable, policies: d.policies, token_policies: d.policies, metadata: d.meta } } }, { data: null });
          }
          ctx.out(authenticated(store));
          columns(ctx.out, [['Key', 'Value'], ['token', token], ['token_accessor', r.body.data.accessor], ['token_duration', r.body.data.ttl], ['token_renewable', r.body.data.renewable], ['token_policies', r.body.data.policies]]);
        } finally {
          c.close();
        }
        return;
      }
      const mountPath = (flag(ctx, 'path') ?? method).replace(/\/+$/, '');
      const data = parseData(ctx.args.positionals);
      // userpass names the user in the path (login/:username), as Vault's CLI sends it.
      const user = method === 'userpass' && typeof data.username === 'string' ? data.username : null;
      if (user !== null) delete data.username;
      const r = await ctx.client.write(`auth/${mountPath}/login${user !== null ? `/${encodeURIComponent(user)}` : ''}`, data);
      ensureOk(r, 'logging in');
      if (!r.body?.auth?.client_token) throw new CliError('Error logging in: no token in the response', 2);
      const store = !boolFlag(ctx, 'no-store');
      if (store) saveToken(r.body.auth.client_token as string);
      if (!ctx.field && ctx.format === 'table') ctx.out(authenticated(store));
      printResponse(ctx, r);
    },
  },
  'token create': {
    usage: '[options]',
    synopsis: 'Create a token (a child of the current one, or an orphan).',
    flags: {
      policy: { kind: 'list', help: 'A policy of the token (comma-separated or repeated).' },
      ttl: { kind: 'string', help: 'Initial TTL (e.g. 1h).' },
      'explicit-max-ttl': { kind: 'string', help: 'Hard limit no renewal passes.' },
      period: { kind: 'string', help: 'Make a periodic token renewed by this period.' },
      'display-name': { kind: 'string', help: 'Name shown in lookups and audit logs.' },
      type: { kind: 'string', help: '"service" (default) or "batch".' },
      'use-limit': { kind: 'string', help: 'Number of uses (0: unlimited).' },
      orphan: { kind: 'bool', help: 'Create without a parent (needs sudo).' },
      renewable: { kind: 'bool', help: 'Whether the token may be renewed (default true).' },
      'no-default-policy': { kind: 'bool', help: 'Do not attach the default policy.' },
      role: { kind: 'string', help: 'Create against this token role.' },
      metadata: { kind: 'list', help: 'A K=V pair of metadata.' },
      id: { kind: 'string', help: 'The token value (root only).' },
    },
    max: 0,
    async run(ctx) {
      const f = ctx.args.flags;
      const body: Record<string, unknown> = {};
      const map: Record<string, string> = { ttl: 'ttl', 'explicit-max-ttl': 'explicit_max_ttl', period: 'period', 'display-name': 'display_name', type: 'type', id: 'id' };
      for (const [flagName, key] of Object.entries(map)) if (f.has(flagName)) body[key] = f.get(flagName);
      if (f.has('use-limit')) body.num_uses = Number(f.get('use-limit'));
      if (f.has('renewable')) body.renewable = f.get('renewable') === 'true';
      if (boolFlag(ctx, 'no-default-policy')) body.no_default_policy = true;
      const policies = commaList(ctx, 'policy');
      if (policies.length) body.policies = policies;
      if (ctx.args.lists.has('metadata')) body.meta = pairsOf(ctx.args.lists.get('metadata'));
      const path = f.has('role') ? `auth/token/create/${f.get('role')}` : boolFlag(ctx, 'orphan') ? 'auth/token/create-orphan' : 'auth/token/create';
      const r = await ctx.client.write(path, body);
      ensureOk(r, 'creating token');
      printResponse(ctx, r);
    },
  },
  'token lookup': {
    usage: '[options] [TOKEN | ACCESSOR]',
    synopsis: 'Show a token\'s properties: the current token, the one given, or by -accessor.',
    flags: ACCESSOR,
    max: 1,
    async run(ctx) {
      const a = arg(ctx);
      if (boolFlag(ctx, 'accessor') && !a) throw new UsageError('-accessor needs an accessor argument');
      const r = !a ? await ctx.client.read('auth/token/lookup-self') : boolFlag(ctx, 'accessor') ? await ctx.client.write('auth/token/lookup-accessor', { accessor: a }) : await ctx.client.write('auth/token/lookup', { token: a });
      ensureOk(r, 'looking up token');
      printResponse(ctx, r);
    },
  },
  'token revoke': {
    usage: '[options] [TOKEN | ACCESSOR]',
    synopsis: 'Revoke a token and its children. Revoking the current token needs -self.',
    flags: {
      ...ACCESSOR,
      self: { kind: 'bool', help: 'Revoke the token in use (no argument).' },
      mode: { kind: 'string', help: '"orphan" revokes the token only, its children become orphans. Default: the token and its children.' },
    },
    output: false,
    max: 1,
    async run(ctx) {
      const a = arg(ctx);
      const self = boolFlag(ctx, 'self');
      const mode = flag(ctx, 'mode');
      if (self && a) throw new UsageError('-self takes no token argument');
      if (!self && !a) throw new UsageError('a token or accessor is required; to revoke the token in use, give -self');
      if (mode !== undefined && mode !== 'orphan' && mode !== '') throw new UsageError(`-mode: unsupported "${mode}" (orphan)`);
      if (self && (mode || boolFlag(ctx, 'accessor'))) throw new UsageError('-self cannot be combined with -mode or -accessor');
      if (boolFlag(ctx, 'accessor') && mode) throw new UsageError('-accessor cannot be combined with -mode');
      const r = self
        ? await ctx.client.write('auth/token/revoke-self', {})
        : boolFlag(ctx, 'accessor')
          ? await ctx.client.write('auth/token/revoke-accessor', { accessor: a })
          : await ctx.client.write(mode === 'orphan' ? 'auth/token/revoke-orphan' : 'auth/token/revoke', { token: a });
      ensureOk(r, 'revoking token');
      ctx.out('Success! Revoked token (if it existed)');
    },
  },
  'token renew': {
    usage: '[options] [TOKEN | ACCESSOR]',
    synopsis: 'Renew a token: the current one, the one given, or by -accessor.',
    flags: { ...ACCESSOR, increment: { kind: 'string', help: 'TTL requested from now (e.g. 1h); the token\'s own TTL by default.', aliases: ['i'] } },
    max: 1,
    async run(ctx) {
      const a = arg(ctx);
      if (boolFlag(ctx, 'accessor') && !a) throw new UsageError('-accessor needs an accessor argument');
      const inc = flag(ctx, 'increment');
      const body: Record<string, unknown> = inc !== undefined ? { increment: inc } : {};
      const r = !a
        ? await ctx.client.write('auth/token/renew-self', body)
        : boolFlag(ctx, 'accessor')
          ? await ctx.client.write('auth/token/renew-accessor', { ...body, accessor: a })
          : await ctx.client.write('auth/token/renew', { ...body, token: a });
      ensureOk(r, 'renewing token');
      printResponse(ctx, r);
    },
  },
  'token capabilities': {
    usage: '[options] [TOKEN | ACCESSOR] PATH',
    synopsis: 'Show what a token may do on a path (the current token with one argument).',
    flags: ACCESSOR,
    min: 1,
    max: 2,
    async run(ctx) {
      const [first, second] = ctx.args.positionals;
      const path = second ?? first!;
      const who = second ? first! : undefined;
      if (boolFlag(ctx, 'accessor') && !who) throw new UsageError('-accessor needs an accessor and a path');
      const r = !who
        ? await ctx.client.write('sys/capabilities-self', { paths: [path] })
        : boolFlag(ctx, 'accessor')
          ? await ctx.client.write('sys/capabilities-accessor', { accessor: who, paths: [path] })
          : await ctx.client.write('sys/capabilities', { token: who, paths: [path] });
      ensureOk(r, 'listing capabilities');
      const caps = ((r.body?.data?.capabilities ?? r.body?.capabilities ?? []) as string[]).slice().sort();
      printData(ctx, caps, () => ctx.out(caps.join(', ')));
    },
  },
  'print token': {
    usage: '[options]',
    synopsis: 'Print the token the CLI would send (STRONGROOM_TOKEN, else the token file of login), or nothing.',
    output: false,
    max: 0,
    async run(ctx) {
      const token = clientOptionsFromEnv(ctx.args.flags).token;
      if (token) ctx.out(token);
    },
  },
  unwrap: {
    usage: '[options] [WRAPPING_TOKEN]',
    synopsis: 'Unwrap a response-wrapping token (the given one, or the token in use) and print the wrapped response.',
    max: 1,
    async run(ctx) {
      const t = arg(ctx);
      // As Vault: with an argument the wrapping token goes in the body; without, the current token is the wrapping token.
      const r = t ? await ctx.client.write('sys/wrapping/unwrap', { token: t }) : await ctx.client.write('sys/wrapping/unwrap', {});
      ensureOk(r, 'unwrapping');
      printResponse(ctx, r);
    },
  },
};
