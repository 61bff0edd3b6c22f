/**
 * Vault-style argument parsing: flags as `-name=value`, `--name=value`,
 * `-name value` or bare `-bool`, mixed with positional arguments, and `--`
 * ending flags. `key=value` positionals are data for write-like commands.
 */
export interface ParsedArgs {
  flags: Map<string, string>;
  positionals: string[];
}

export function parseArgs(argv: string[], booleanFlags: ReadonlySet<string> = new Set()): ParsedArgs {
  const flags = new Map<string, string>();
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (a.startsWith('-') && a.length > 1 && !/^-\d/.test(a)) {
      const body = a.replace(/^--?/, '');
      const eq = body.indexOf('=');
      if (eq !== -1) {
        flags.set(body.slice(0, eq), body.slice(eq + 1));
      } else if (booleanFlags.has(body)) {
        flags.set(body, 'true');
      } else {
        const next = argv[i + 1];
        if (next !== undefined && !next.startsWith('-')) {
          flags.set(body, next);
          i++;
        } else {
          flags.set(body, 'true');
        }
      }
    } else {
      positionals.push(a);
    }
  }
  return { flags, positionals };
}

/** `k=v` pairs into an object; `k=@file` reads a file, `k=-` reads stdin (by the caller). */
export function kvPairs(pairs: string[], readFile: (p: string) => string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of pairs) {
    const eq = p.indexOf('=');
    if (eq <= 0) throw new Error(`invalid key=value argument: "${p}"`);
    const k = p.slice(0, eq);
    const v = p.slice(eq + 1);
    const value = v.startsWith('@') ? readFile(v.slice(1)) : v;
    const prev = out[k];
    // Repeating a key builds a list, as the Vault CLI does.
    out[k] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return out;
}
