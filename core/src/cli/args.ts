/**
 * Vault-style argument parsing against a command's declared flags: flags as
 * `-name=value`, `--name=value`, `-name value` or bare `-bool`, mixed with
 * positional arguments, and `--` ending flags. `key=value` positionals are
 * data for write-like commands.
 *
 * Safety rules (the reason flags are declared, not guessed):
 * - `-h`, `-help` or `--help` anywhere before `--` asks for the command's
 *   usage; the caller prints it and does nothing else.
 * - An undeclared flag is a usage error (exit 1), never silently dropped, so a
 *   misspelt `-max-lease-ttl` cannot turn into a default.
 */
import { readFileSync } from 'node:fs';

export type FlagKind = 'bool' | 'string' | 'list';

export interface FlagDef {
  kind: FlagKind;
  help: string;
  /** Other spellings (e.g. `ns` for `namespace`, `f` for `force`). */
  aliases?: string[];
}

export type FlagSpec = Record<string, FlagDef>;

export interface ParsedArgs {
  /** Last value of each flag given (bools as "true"/"false"), keyed by canonical name. */
  flags: Map<string, string>;
  /** Every value of a `list` flag, in order. */
  lists: Map<string, string[]>;
  positionals: string[];
  help: boolean;
}

/** A mistake in the command line: exit code 1, with the command's usage printed by the caller. */
export class UsageError extends Error {}

const HELP = new Set(['-h', '-help', '--help', '--h']);

export function parseArgs(argv: string[], spec: FlagSpec): ParsedArgs {
  const canonical = new Map<string, string>();
  for (const [name, def] of Object.entries(spec)) {
    canonical.set(name, name);
    for (const a of def.aliases ?? []) canonical.set(a, name);
  }
  const flags = new Map<string, string>();
  const lists = new Map<string, string[]>();
  const positionals: string[] = [];
  const dashDash = argv.indexOf('--');
  // Help wins over everything, wherever it is: `kv delete -h secret/x` must not delete.
  if ((dashDash === -1 ? argv : argv.slice(0, dashDash)).some((a) => HELP.has(a))) {
    return { flags, lists, positionals, help: true };
  }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!(a.startsWith('-') && a.length > 1 && !/^-\d/.test(a))) {
      positionals.push(a);
      continue;
    }
    const body = a.replace(/^--?/, '');
    const eq = body.indexOf('=');
    const given = eq === -1 ? body : body.slice(0, eq);
    const name = canonical.get(given);
    if (!name) throw new UsageError(`flag provided but not defined: -${given}`);
    const def = spec[name]!;
    let value: string;
    if (eq !== -1) {
      value = body.slice(eq + 1);
    } else if (def.kind === 'bool') {
      value = 'true';
    } else {
      const next = argv[i + 1];
      if (next === undefined) throw new UsageError(`flag needs an argument: -${given}`);
      value = next;
      i++;
    }
    if (def.kind === 'bool') {
      const v = value.toLowerCase();
      if (!['true', 'false', '1', '0', 't', 'f'].includes(v)) throw new UsageError(`invalid boolean value "${value}" for -${given}`);
      value = v === 'true' || v === '1' || v === 't' ? 'true' : 'false';
    }
    flags.set(name, value);
    if (def.kind === 'list') lists.set(name, [...(lists.get(name) ?? []), value]);
  }
  return { flags, lists, positionals, help: false };
}

/** Reads a file, or stdin for `-`. */
export const readSource = (p: string): string => (p === '-' ? readFileSync(0, 'utf8') : readFileSync(p, 'utf8'));

/**
 * The data arguments of `write`, `patch`, `kv put`...: `-` (a JSON object on
 * stdin), `@file.json` (a JSON object in a file), or `k=v` pairs where
 * `k=@file` reads the value from a file and `k=-` from stdin. Repeating a key
 * builds a list, as the Vault CLI does.
 */
export function parseData(args: string[], readFile: (p: string) => string = readSource): Record<string, unknown> {
  if (args.length === 1 && (args[0] === '-' || args[0]!.startsWith('@'))) {
    const src = args[0] === '-' ? '-' : args[0]!.slice(1);
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFile(src));
    } catch (err) {
      throw new UsageError(`failed to parse JSON input from ${src === '-' ? 'stdin' : src}: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError('JSON input must be an object');
    return parsed as Record<string, unknown>;
  }
  const out: Record<string, unknown> = {};
  for (const p of args) {
    const eq = p.indexOf('=');
    if (eq <= 0) throw new UsageError(`invalid key/value pair "${p}": format must be key=value`);
    const k = p.slice(0, eq);
    const v = p.slice(eq + 1);
    const value = v === '-' ? readFile('-').replace(/\n$/, '') : v.startsWith('@') ? readFile(v.slice(1)) : v;
    const prev = out[k];
    out[k] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return out;
}

/** `k=v` pairs of a list flag (e.g. `-options=version=2`) into an object. */
export function pairsOf(values: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of values ?? []) {
    const eq = p.indexOf('=');
    if (eq <= 0) throw new UsageError(`invalid key/value pair "${p}": format must be key=value`);
    out[p.slice(0, eq)] = p.slice(eq + 1);
  }
  return out;
}
