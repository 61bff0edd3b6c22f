/**
 * How the CLI prints, as Vault's does: `-format=table` (default; aligned
 * columns), `json` or `yaml` (the whole response, or the key list for `list`),
 * and `-field=NAME` (one raw value from the data, or from the auth block under
 * Vault's names: `token`, `token_accessor`, ...). STRONGROOM_FORMAT (or
 * VAULT_FORMAT) sets the default format.
 */
import { UsageError } from './args.js';

export type Format = 'table' | 'json' | 'yaml';
export type Out = (s: string) => void;

export function formatOf(flag: string | undefined): Format {
  const f = (flag ?? process.env.STRONGROOM_FORMAT ?? process.env.VAULT_FORMAT ?? 'table').toLowerCase();
  if (f !== 'table' && f !== 'json' && f !== 'yaml') throw new UsageError(`invalid output format "${f}": must be table, json or yaml`);
  return f;
}

/** Prints a structured value in json or yaml. */
export function printStructured(out: Out, format: 'json' | 'yaml', value: unknown): void {
  if (format === 'json') out(JSON.stringify(value ?? null, null, 2));
  else out((require('yaml') as typeof import('yaml')).stringify(value ?? null).replace(/\n$/, ''));
}

const cell = (v: unknown): string => (v === undefined || v === null ? 'n/a' : typeof v === 'string' ? v : JSON.stringify(v));

/** Aligned columns, the first row a header (underlined with dashes when `header`). */
export function columns(out: Out, rows: unknown[][], header = true): void {
  const text = rows.map((r) => r.map(cell));
  if (header && text.length) text.splice(1, 0, text[0]!.map((h) => '-'.repeat(h.length)));
  const widths: number[] = [];
  for (const r of text) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  for (const r of text) out(r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('    ').trimEnd());
}

/** A Key/Value table. */
export function keyValues(out: Out, rows: Array<[string, unknown]>): void {
  columns(out, [['Key', 'Value'], ...rows]);
}

/** The rows Vault prints for a response: lease, auth (as token_*), wrap info, then data sorted by key. */
export function responseRows(body: any, data: Record<string, unknown> | null): Array<[string, unknown]> {
  const rows: Array<[string, unknown]> = [];
  if (body?.lease_id) rows.push(['lease_id', body.lease_id], ['lease_duration', body.lease_duration], ['lease_renewable', body.renewable]);
  else if (body?.lease_duration && !body?.auth) rows.push(['refresh_interval', body.lease_duration]);
  if (body?.auth) for (const [k, v] of Object.entries(authFields(body.auth))) rows.push([k, v]);
  if (body?.wrap_info) for (const [k, v] of Object.entries(wrapFields(body.wrap_info))) rows.push([k, v]);
  for (const k of Object.keys(data ?? {}).sort()) rows.push([k, data![k]]);
  return rows;
}

function authFields(a: any): Record<string, unknown> {
  const out: Record<string, unknown> = {
    token: a.client_token,
    token_accessor: a.accessor,
    token_duration: a.lease_duration,
    token_renewable: a.renewable,
    token_policies: a.token_policies ?? a.policies,
    identity_policies: a.identity_policies ?? [],
    policies: a.policies,
  };
  for (const [k, v] of Object.entries(a.metadata ?? {})) out[`token_meta_${k}`] = v;
  return out;
}

function wrapFields(w: any): Record<string, unknown> {
  return {
    wrapping_token: w.token,
    wrapping_accessor: w.accessor,
    wrapping_token_ttl: w.ttl,
    wrapping_token_creation_time: w.creation_time,
    wrapping_token_creation_path: w.creation_path,
  };
}

/** The raw value of `-field`: data first, then auth, wrap info and lease fields. Undefined when absent. */
export function fieldOf(body: any, data: Record<string, unknown> | null, field: string): unknown {
  if (data && Object.hasOwn(data, field)) return data[field];
  if (body?.auth) {
    const a = authFields(body.auth);
    if (Object.hasOwn(a, field)) return a[field];
  }
  if (body?.wrap_info) {
    const w = wrapFields(body.wrap_info);
    if (Object.hasOwn(w, field)) return w[field];
  }
  const lease: Record<string, unknown> = { lease_id: body?.lease_id, lease_duration: body?.lease_duration, lease_renewable: body?.renewable };
  if (body?.lease_id && Object.hasOwn(lease, field)) return lease[field];
  return undefined;
}

/** Prints one field as Vault does: strings raw, other values as JSON (or per `format`). */
export function printField(out: Out, format: Format, value: unknown): void {
  if (format === 'yaml') return printStructured(out, 'yaml', value);
  if (format === 'json') return printStructured(out, 'json', value);
  out(typeof value === 'string' ? value : JSON.stringify(value));
}
