/**
 * Statement helpers shared by the SQL database plugins, with Vault's rules:
 * each command may hold several `;`-separated statements (split before any
 * value is substituted, so a value can never add a statement), and
 * `{{name}}`/`{{username}}`, `{{password}}`, `{{expiration}}` are replaced
 * as text. Values that could leave a quoted SQL literal or identifier
 * (quotes, backslash, `;`, control characters) are refused, so substitution
 * cannot inject SQL whatever quoting the operator's statements use.
 */
import { badRequest } from '../errors.js';

/** Splits each command on `;` and drops empty statements. */
export function splitStatements(commands: readonly string[]): string[] {
  const out: string[] = [];
  for (const c of commands) {
    for (const part of c.split(';')) {
      const s = part.trim();
      if (s) out.push(s);
    }
  }
  return out;
}

const UNSAFE = /['"`\\;\u0000-\u001f\u007f]/;

/** Refuses a value that cannot be placed inside a quoted SQL literal or identifier. */
export function assertSqlSafe(field: string, value: string): void {
  if (UNSAFE.test(value)) throw badRequest(`${field} contains characters that cannot be used in SQL statements (quotes, backslash, ';' or control characters)`);
}

export interface StatementValues {
  name?: string;
  password?: string;
  expiration?: string;
}

/** Substitutes `{{name}}` (also spelled `{{username}}`), `{{password}}` and `{{expiration}}`. */
export function renderStatement(statement: string, values: StatementValues): string {
  return statement.replace(/\{\{\s*(name|username|password|expiration)\s*\}\}/g, (m, key: string) => {
    const v = key === 'username' || key === 'name' ? values.name : values[key as 'password' | 'expiration'];
    return v === undefined ? m : v;
  });
}

/** Vault's expiration format for SQL databases (Go layout "2006-01-02 15:04:05-0700"), in UTC. */
export function formatExpiration(unixSeconds: number): string {
  const d = new Date(unixSeconds * 1000);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}+0000`;
}
