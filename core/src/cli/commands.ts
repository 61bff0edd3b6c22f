/**
 * Client commands, following the Vault CLI: each command maps to one or two
 * API calls and prints the data as a key/value table, or the whole JSON
 * response with `-format=json`, or one field with `-field=NAME`.
 */
import { readFileSync } from 'node:fs';
import { kvPairs, type ParsedArgs } from './args.js';
import { clientOptionsFromEnv, createClient, saveToken, type ApiResult, type Client } from './client.js';

export class CliError extends Error {
  constructor(message: string, readonly exitCode = 2) {
    super(message);
  }
}

type Out = (s: string) => void;

interface Ctx {
  args: ParsedArgs;
  client: Client;
  out: Out;
  json: boolean;
}

const readArg = (p: string) => (p === '-' ? readFileSync(0, 'utf8') : readFileSync(p, 'utf8'));

function ensureOk(r: ApiResult, what: string): void {
  if (r.status >= 400) {
    const errs = (r.body?.errors as string[] | undefined)?.join('\n  * ') ?? r.text;
    throw new CliError(`Error ${what}: Code: ${r.status}. Errors:\n\n  * ${errs}`, r.status === 404 ? 2 : 2);
  }
}

function print(ctx: Ctx, r: ApiResult, fallback?: string): void {
  const field = ctx.args.flags.get('field');
  const data = (r.body?.data ?? null) as Record<string, unknown> | null;
  if (field) {
    const v = data?.[field] ?? r.body?.auth?.[field];
    if (v === undefined) throw new CliError(`Field "${field}" not present in secret`, 1);
    ctx.out(typeof v === 'string' ? v : JSON.stringify(v));
    return;
  }
  if (ctx.json) {
    ctx.out(JSON.stringify(r.body ?? {}, null, 2));
    return;
  }
  if (r.status === 204 || (!data && !r.body?.auth)) {
    if (fallback) ctx.out(fallback);
    return;
  }
  const rows: Array<[string, unknown]> = [];
  if (r.body?.lease_id) rows.push(['lease_id', r.body.lease_id], ['lease_duration', r.body.lease_duration], ['lease_renewable', r.body.renewable]);
  if (r.body?.auth) {
    const a = r.body.auth;
    rows.push(['token', a.client_token], ['token_accessor', a.accessor], ['token_duration', a.lease_duration], ['token_renewable', a.renewable], ['token_policies', a.token_policies ?? a.policies]);
  }
  for (const [k, v] of Object.entries(data ?? {})) rows.push([k, v]);
  table(ctx.out, rows);
}

function table(out: Out, rows: Array<[string, unknown]>): void {
  const width = Math.max(3, ...rows.map(([k]) => k.length));
  out(`${'Key'.padEnd(width)}    Value`);
  out(`${'---'.padEnd(width)}    -----`);
  for (const [k, v] of rows) out(`${k.padEnd(width)}    ${typeof v === 'string' ? v : JSON.stringify(v)}`);
}

async function kvMount(client: Client, path: string): Promise<{ mount: string; version: number }> {
  const r = await client.read(`sys/internal/ui/mounts/${path}`);
  ensureOk(r, `detecting the kv version of ${path}`);
  const d = r.body.data as { path: string; options?: { version?: string } };
  return { mount: d.path, version: d.options?.version === '2' ? 2 : 1 };
}

function kvPath(m: { mount: string; version: number }, path: string, kind: 'data' | 'metadata' | 'delete'): string {
  const rest = path.slice(m.mount.length).replace(/^\/+/, '');
  return m.version === 2 ? `${m.mount}${kind}/${rest}` : `${m.mount}${rest}`;
}

const need = (ctx: Ctx, n: number, usage: string) => {
  if (ctx.args.positionals.length < n) throw new CliError(`Not enough arguments.\nUsage: strongroom ${usage}`, 1);
};

export const COMMANDS: Record<string, (ctx: Ctx) => Promise<void>> = {
  async status(ctx) {
    const r = await ctx.client.read('sys/seal-status');
    ensureOk(r, 'checking seal status');
    if (ctx.json) return ctx.out(JSON.stringify(r.body, null, 2));
    const b = r.body;
    table(ctx.out, [['Seal Type', b.type], ['Initialized', b.initialized], ['Sealed', b.sealed], ['Total Shares', b.n], ['Threshold', b.t], ['Unseal Progress', `${b.progress}/${b.t}`], ['Version', b.version], ['Storage Type', b.storage_type], ['Cluster Name', b.cluster_name]]);
    if (b.sealed) throw new CliError('', 2);
  },
  async 'operator init'(ctx) {
    const shares = Number(ctx.args.flags.get('key-shares') ?? 5);
    const threshold = Number(ctx.args.flags.get('key-threshold') ?? 3);
    const r = await ctx.client.write('sys/init', { secret_shares: shares, secret_threshold: threshold });
    ensureOk(r, 'initializing');
    if (ctx.json) return ctx.out(JSON.stringify(r.body, null, 2));
    (r.body.keys_base64 as string[]).forEach((k, i) => ctx.out(`Unseal Key ${i + 1}: ${k}`));
    ctx.out(`\nInitial Root Token: ${r.body.root_token}`);
  },
  async 'operator unseal'(ctx) {
    const key = ctx.args.positionals[0];
    const body = ctx.args.flags.get('reset') === 'true' ? { reset: true } : { key: key ?? readArg('-').trim() };
    const r = await ctx.client.write('sys/unseal', body);
    ensureOk(r, 'unsealing');
    if (ctx.json) return ctx.out(JSON.stringify(r.body, null, 2));
    table(ctx.out, [['Sealed', r.body.sealed], ['Unseal Progress', `${r.body.progress}/${r.body.t}`]]);
  },
  async 'operator seal'(ctx) {
    const r = await ctx.client.write('sys/seal', {});
    ensureOk(r, 'sealing');
    ctx.out('Success! Strongroom is sealed.');
  },
  async read(ctx) {
    need(ctx, 1, 'read PATH');
    const r = await ctx.client.read(ctx.args.positionals[0]!);
    if (r.status === 404) throw new CliError(`No value found at ${ctx.args.positionals[0]}`, 2);
    ensureOk(r, 'reading');
    print(ctx, r);
  },
  async write(ctx) {
    need(ctx, 1, 'write PATH [K=V...]');
    const [path, ...pairs] = ctx.args.positionals;
    const r = await ctx.client.write(path!, kvPairs(pairs, readArg));
    ensureOk(r, `writing to ${path}`);
    print(ctx, r, `Success! Data written to: ${path}`);
  },
  async list(ctx) {
    need(ctx, 1, 'list PATH');
    const r = await ctx.client.list(ctx.args.positionals[0]!);
    if (r.status === 404) throw new CliError(`No value found at ${ctx.args.positionals[0]}`, 2);
    ensureOk(r, 'listing');
    if (ctx.json) return ctx.out(JSON.stringify(r.body.data.keys, null, 2));
    ctx.out('Keys\n----');
    for (const k of r.body.data.keys as string[]) ctx.out(k);
  },
  async delete(ctx) {
    need(ctx, 1, 'delete PATH');
    const r = await ctx.client.delete(ctx.args.positionals[0]!);
    ensureOk(r, 'deleting');
    ctx.out(`Success! Data deleted (if it existed) at: ${ctx.args.positionals[0]}`);
  },
  async 'kv get'(ctx) {
    need(ctx, 1, 'kv get PATH');
    const path = ctx.args.positionals[0]!;
    const m = await kvMount(ctx.client, path);
    const version = ctx.args.flags.get('version');
    const r = await ctx.client.read(kvPath(m, path, 'data'), version ? { version } : undefined);
    if (r.status === 404) throw new CliError(`No value found at ${path}`, 2);
    ensureOk(r, 'reading');
    if (m.version === 2 && !ctx.json) r.body.data = r.body.data.data;
    print(ctx, r);
  },
  async 'kv put'(ctx) {
    need(ctx, 1, 'kv put PATH K=V...');
    const [path, ...pairs] = ctx.args.positionals;
    const m = await kvMount(ctx.client, path!);
    const data = kvPairs(pairs, readArg);
    const cas = ctx.args.flags.get('cas');
    const body = m.version === 2 ? { data, ...(cas !== undefined ? { options: { cas: Number(cas) } } : {}) } : data;
    const r = await ctx.client.write(kvPath(m, path!, 'data'), body);
    ensureOk(r, `writing to ${path}`);
    print(ctx, r, `Success! Data written to: ${path}`);
  },
  async 'kv list'(ctx) {
    need(ctx, 1, 'kv list PATH');
    const path = ctx.args.positionals[0]!;
    const m = await kvMount(ctx.client, path);
    const r = await ctx.client.list(kvPath(m, path, 'metadata'));
    if (r.status === 404) throw new CliError(`No value found at ${path}`, 2);
    ensureOk(r, 'listing');
    if (ctx.json) return ctx.out(JSON.stringify(r.body.data.keys, null, 2));
    ctx.out('Keys\n----');
    for (const k of r.body.data.keys as string[]) ctx.out(k);
  },
  async 'kv delete'(ctx) {
    need(ctx, 1, 'kv delete PATH');
    const path = ctx.args.positionals[0]!;
    const m = await kvMount(ctx.client, path);
    const r = await ctx.client.delete(kvPath(m, path, 'data'));
    ensureOk(r, 'deleting');
    ctx.out(`Success! Data deleted (if it existed) at: ${path}`);
  },
  async login(ctx) {
    const method = ctx.args.flags.get('method') ?? 'token';
    let r: ApiResult;
    if (method === 'token') {
      const token = ctx.args.positionals[0] ?? readArg('-').trim();
      const c = createClient({ ...clientOptionsFromEnv(ctx.args.flags), token });
      r = await c.read('auth/token/lookup-self');
      c.close();
      ensureOk(r, 'logging in');
      saveToken(token);
      ctx.out('Success! You are now authenticated.');
      return;
    }
    const mountPath = ctx.args.flags.get('path') ?? method;
    r = await ctx.client.write(`auth/${mountPath}/login`, kvPairs(ctx.args.positionals, readArg));
    ensureOk(r, 'logging in');
    saveToken(r.body.auth.client_token as string);
    print(ctx, r);
  },
  async 'token create'(ctx) {
    const f = ctx.args.flags;
    const body: Record<string, unknown> = {};
    for (const k of ['ttl', 'explicit-max-ttl', 'period', 'display-name', 'type', 'use-limit', 'orphan', 'renewable']) {
      if (f.has(k)) body[k.replace(/-/g, '_').replace('use_limit', 'num_uses')] = f.get(k);
    }
    const policies = ctx.args.positionals.length ? ctx.args.positionals : f.get('policy')?.split(',');
    if (policies) body.policies = policies;
    const r = await ctx.client.write(f.get('orphan') === 'true' ? 'auth/token/create-orphan' : 'auth/token/create', body);
    ensureOk(r, 'creating token');
    print(ctx, r);
  },
  async 'token lookup'(ctx) {
    const arg = ctx.args.positionals[0];
    const r = arg ? await ctx.client.write(ctx.args.flags.get('accessor') === 'true' ? 'auth/token/lookup-accessor' : 'auth/token/lookup', ctx.args.flags.get('accessor') === 'true' ? { accessor: arg } : { token: arg }) : await ctx.client.read('auth/token/lookup-self');
    ensureOk(r, 'looking up token');
    print(ctx, r);
  },
  async 'token revoke'(ctx) {
    const arg = ctx.args.positionals[0];
    const r = ctx.args.flags.get('self') === 'true' || !arg ? await ctx.client.write('auth/token/revoke-self', {}) : await ctx.client.write('auth/token/revoke', { token: arg });
    ensureOk(r, 'revoking token');
    ctx.out('Success! Revoked token (if it existed)');
  },
  async 'secrets enable'(ctx) {
    need(ctx, 1, 'secrets enable [-path=P] [-version=N] TYPE');
    const type = ctx.args.positionals[0]!;
    const path = ctx.args.flags.get('path') ?? type;
    const options: Record<string, string> = {};
    if (ctx.args.flags.has('version')) options.version = ctx.args.flags.get('version')!;
    const body: Record<string, unknown> = { type, options, description: ctx.args.flags.get('description') ?? '' };
    if (ctx.args.flags.has('plugin-version')) body.plugin_version = ctx.args.flags.get('plugin-version');
    const r = await ctx.client.write(`sys/mounts/${path}`, body);
    ensureOk(r, 'enabling');
    ctx.out(`Success! Enabled the ${type} secrets engine at: ${path.replace(/\/?$/, '/')}`);
  },
  async 'secrets disable'(ctx) {
    need(ctx, 1, 'secrets disable PATH');
    const r = await ctx.client.delete(`sys/mounts/${ctx.args.positionals[0]}`);
    ensureOk(r, 'disabling');
    ctx.out(`Success! Disabled the secrets engine (if it existed) at: ${ctx.args.positionals[0]}`);
  },
  async 'secrets list'(ctx) {
    const r = await ctx.client.read('sys/mounts');
    ensureOk(r, 'listing secrets engines');
    if (ctx.json) return ctx.out(JSON.stringify(r.body.data, null, 2));
    table(ctx.out, Object.entries(r.body.data as Record<string, { type: string; description: string }>).map(([p, m]) => [p, `${m.type}  ${m.description}`]));
  },
  async 'auth enable'(ctx) {
    need(ctx, 1, 'auth enable [-path=P] TYPE');
    const type = ctx.args.positionals[0]!;
    const path = ctx.args.flags.get('path') ?? type;
    const r = await ctx.client.write(`sys/auth/${path}`, { type, description: ctx.args.flags.get('description') ?? '' });
    ensureOk(r, 'enabling');
    ctx.out(`Success! Enabled ${type} auth method at: ${path.replace(/\/?$/, '/')}`);
  },
  async 'auth list'(ctx) {
    const r = await ctx.client.read('sys/auth');
    ensureOk(r, 'listing auth methods');
    if (ctx.json) return ctx.out(JSON.stringify(r.body.data, null, 2));
    table(ctx.out, Object.entries(r.body.data as Record<string, { type: string; description: string }>).map(([p, m]) => [p, `${m.type}  ${m.description}`]));
  },
  async 'policy write'(ctx) {
    need(ctx, 2, 'policy write NAME FILE');
    const [name, file] = ctx.args.positionals;
    const r = await ctx.client.write(`sys/policies/acl/${name}`, { policy: readArg(file!) });
    ensureOk(r, 'uploading policy');
    ctx.out(`Success! Uploaded policy: ${name}`);
  },
  async 'policy read'(ctx) {
    need(ctx, 1, 'policy read NAME');
    const r = await ctx.client.read(`sys/policies/acl/${ctx.args.positionals[0]}`);
    ensureOk(r, 'reading policy');
    if (ctx.json) return ctx.out(JSON.stringify(r.body, null, 2));
    ctx.out(r.body.data.policy as string);
  },
  async 'policy list'(ctx) {
    const r = await ctx.client.list('sys/policies/acl');
    ensureOk(r, 'listing policies');
    if (ctx.json) return ctx.out(JSON.stringify(r.body.data.keys, null, 2));
    for (const k of r.body.data.keys as string[]) ctx.out(k);
  },
  async 'plugin register'(ctx) {
    need(ctx, 2, 'plugin register -sha256=HEX [-version=V] [-command=C] TYPE NAME');
    const [type, name] = ctx.args.positionals;
    const f = ctx.args.flags;
    const body: Record<string, unknown> = { sha256: f.get('sha256'), command: f.get('command') ?? name };
    if (f.has('version')) body.version = f.get('version');
    if (f.has('args')) body.args = f.get('args')!.split(',');
    const r = await ctx.client.write(`sys/plugins/catalog/${type}/${name}`, body);
    ensureOk(r, 'registering plugin');
    ctx.out(`Success! Registered plugin: ${name}`);
  },
  async 'plugin list'(ctx) {
    const type = ctx.args.positionals[0];
    const r = await ctx.client.read(type ? `sys/plugins/catalog/${type}` : 'sys/plugins/catalog');
    ensureOk(r, 'listing plugins');
    if (ctx.json) return ctx.out(JSON.stringify(r.body.data, null, 2));
    const detailed = (r.body.data.detailed ?? []) as Array<{ name: string; type: string; version: string }>;
    table(ctx.out, detailed.map((p) => [p.name, `${p.type}  ${p.version}`]));
  },
  async 'plugin info'(ctx) {
    need(ctx, 2, 'plugin info TYPE NAME');
    const [type, name] = ctx.args.positionals;
    const v = ctx.args.flags.get('version');
    const r = await ctx.client.read(`sys/plugins/catalog/${type}/${name}`, v ? { version: v } : undefined);
    ensureOk(r, 'reading plugin');
    print(ctx, r);
  },
};

export async function runClientCommand(name: string, args: ParsedArgs, out: Out): Promise<void> {
  const cmd = COMMANDS[name];
  if (!cmd) throw new CliError(`Unknown command: ${name}`, 1);
  const client = createClient(clientOptionsFromEnv(args.flags));
  try {
    await cmd({ args, client, out, json: args.flags.get('format') === 'json' });
  } finally {
    client.close();
  }
}
