/**
 * The shape every client command shares: its usage, synopsis, declared flags
 * (checked by parseArgs: unknown flags are errors), argument count, and a
 * `run` that talks to the API through `Ctx`. Exit codes follow Vault: 0
 * success, 1 a local mistake (usage, unreadable file, unreachable server), 2
 * an error answered by the server.
 */
import { UsageError, type FlagSpec, type ParsedArgs } from './args.js';
import type { ApiResult, Client } from './client.js';
import { fieldOf, keyValues, printField, printStructured, responseRows, type Format, type Out } from './output.js';

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
  }
}

export interface Ctx {
  args: ParsedArgs;
  client: Client;
  out: Out;
  err: Out;
  format: Format;
  field: string | undefined;
}

export interface Command {
  usage: string;
  synopsis: string;
  /** Longer help shown by `-h`, after the usage line. */
  help?: string;
  flags?: FlagSpec;
  /** Whether -format/-field apply (default true). */
  output?: boolean;
  min?: number;
  max?: number;
  run(ctx: Ctx): Promise<void>;
}

/** Flags every API command takes. */
const HTTP_FLAGS: FlagSpec = {
  address: { kind: 'string', help: 'Address of the server (STRONGROOM_ADDR).' },
  'ca-cert': { kind: 'string', help: 'PEM CA certificate to verify the server (STRONGROOM_CACERT).' },
  'tls-skip-verify': { kind: 'bool', help: 'Do not verify the server certificate (STRONGROOM_SKIP_VERIFY). Insecure.' },
  namespace: { kind: 'string', help: 'Namespace of the request (STRONGROOM_NAMESPACE).', aliases: ['ns'] },
  'wrap-ttl': { kind: 'string', help: 'Wrap the response in a single-use token valid this long (e.g. 5m) and print the wrap info (STRONGROOM_WRAP_TTL).' },
  'output-curl-string': { kind: 'bool', help: 'Print the equivalent curl command (the token as $(strongroom print token)) and exit without sending the request.' },
  'non-interactive': { kind: 'bool', help: 'Never prompt: fail where a prompt would be needed.' },
};

const OUTPUT_FLAGS: FlagSpec = {
  format: { kind: 'string', help: 'Output format: table, json or yaml (STRONGROOM_FORMAT).' },
  field: { kind: 'string', help: 'Print only this field, raw (data fields, or token, token_accessor, ... of an auth response).' },
};

export function flagsOf(cmd: Command): FlagSpec {
  return { ...HTTP_FLAGS, ...(cmd.output === false ? {} : OUTPUT_FLAGS), ...(cmd.flags ?? {}) };
}

export function helpText(name: string, cmd: Command): string {
  const lines = [`Usage: strongroom ${name} ${cmd.usage}`.trimEnd(), '', `  ${cmd.synopsis}`];
  if (cmd.help) lines.push('', ...cmd.help.split('\n').map((l) => (l ? `  ${l}` : '')));
  const own = cmd.flags ?? {};
  const section = (title: string, spec: FlagSpec) => {
    const names = Object.keys(spec);
    if (!names.length) return;
    lines.push('', `${title}:`);
    for (const n of names) {
      const d = spec[n]!;
      const arg = d.kind === 'bool' ? '' : '=<value>';
      const alias = d.aliases?.length ? ` (also -${d.aliases.join(', -')})` : '';
      lines.push(`  -${n}${arg}${alias}`, `      ${d.help}${d.kind === 'list' ? ' Repeatable.' : ''}`);
    }
  };
  section('Command Options', own);
  if (cmd.output !== false) section('Output Options', OUTPUT_FLAGS);
  section('HTTP Options', HTTP_FLAGS);
  return lines.join('\n');
}

export function checkCount(name: string, cmd: Command, n: number): void {
  if (cmd.min !== undefined && n < cmd.min) throw new UsageError(`Not enough arguments (expected ${cmd.min}, got ${n})`);
  if (cmd.max !== undefined && n > cmd.max) throw new UsageError(`Too many arguments (expected ${cmd.max === cmd.min ? cmd.max : `at most ${cmd.max}`}, got ${n})`);
  void name;
}

/** Throws the server's errors as Vault prints them (exit 2). */
export function ensureOk(r: ApiResult, what: string): void {
  if (r.status >= 400) {
    const errs = Array.isArray(r.body?.errors) ? (r.body.errors as string[]) : [r.text || `HTTP ${r.status}`];
    throw new CliError(`Error ${what}: Code: ${r.status}. Errors:\n\n* ${errs.join('\n* ')}`, 2);
  }
}

/**
 * Prints an API response: `-field` picks one value, json/yaml the whole body,
 * table the Vault rows. `data` overrides the data shown (kv v2's inner data).
 * With nothing to show, prints `fallback` (Vault's "Success! ..." lines).
 */
export function printResponse(ctx: Ctx, r: ApiResult, opts: { data?: Record<string, unknown> | null; fallback?: string } = {}): void {
  const data = opts.data !== undefined ? opts.data : ((r.body?.data ?? null) as Record<string, unknown> | null);
  if (ctx.field) {
    const v = fieldOf(r.body, data, ctx.field);
    if (v === undefined) throw new CliError(`Field "${ctx.field}" not present in secret`, 1);
    return printField(ctx.out, ctx.format, v);
  }
  if (ctx.format !== 'table') {
    if (r.status === 204 || r.body === null || r.body === '') {
      if (opts.fallback) ctx.out(opts.fallback);
      return;
    }
    return printStructured(ctx.out, ctx.format, r.body);
  }
  const rows = responseRows(r.body, data);
  if (!rows.length) {
    if (opts.fallback) ctx.out(opts.fallback);
    return;
  }
  keyValues(ctx.out, rows);
}

/** Prints a list of keys: json/yaml as an array, table as a `Keys` column. */
export function printKeys(ctx: Ctx, keys: string[]): void {
  if (ctx.field) throw new CliError('-field is not supported for a list', 1);
  if (ctx.format !== 'table') return printStructured(ctx.out, ctx.format, keys);
  ctx.out('Keys');
  ctx.out('----');
  for (const k of keys) ctx.out(k);
}

/** Prints data that is not a secret response (status, lists of mounts...): structured, or via `table`. */
export function printData(ctx: Ctx, value: unknown, table: () => void): void {
  if (ctx.field) {
    const v = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[ctx.field] : undefined;
    if (v === undefined) throw new CliError(`Field "${ctx.field}" not present in secret`, 1);
    return printField(ctx.out, ctx.format, v);
  }
  if (ctx.format !== 'table') return printStructured(ctx.out, ctx.format, value);
  table();
}

/** A mount or device path as the API names it: no leading slash, one trailing slash. */
export const trail = (p: string) => p.replace(/^\/+/, '').replace(/\/?$/, '/');

export const flag = (ctx: Ctx, name: string) => ctx.args.flags.get(name);
export const boolFlag = (ctx: Ctx, name: string) => ctx.args.flags.get(name) === 'true';
const list = (ctx: Ctx, name: string) => ctx.args.lists.get(name) ?? [];
/** A list flag whose values may also be comma-separated (Vault's `-policy=a,b -policy=c`). */
export const commaList = (ctx: Ctx, name: string) => list(ctx, name).flatMap((v) => v.split(',')).map((s) => s.trim()).filter(Boolean);
