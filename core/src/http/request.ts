/**
 * Parsing an HTTP request into an ApiRequest: verb to operation, path,
 * namespace header, token, body and query.
 *
 * What must stay true:
 * - The path handed to the core is percent-decoded and then checked: no NUL,
 *   no `.` or `..` segment, in the URL or in the namespace header, so a path
 *   can never climb out of a mount or namespace prefix after decoding.
 * - A JSON body never yields a `__proto__` key (it is dropped at any depth),
 *   so no later merge of `data` can change an object's prototype.
 * - The token is only extracted here; it is never logged by this layer.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { StrongroomError, badRequest } from '@strongroom/sdk-plugin/host';
import { LIST_MARKER_HEADER, SCAN_MARKER_HEADER } from './list-method.js';
import type { ApiOperation, ApiRequest } from './types.js';

export const API_PREFIX = '/v1/';

export interface RawHttpRequest {
  /** Method after LIST/SCAN translation (either arrives as GET plus its marker header). */
  method: string;
  /** Request target as received: `/v1/...?query`. */
  url: string;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  remoteAddress: string | undefined;
}

export interface ParseOptions {
  /** The listener's `require_request_header`: X-Service-Request / X-Vault-Request must be `true`. */
  requireRequestHeader: boolean;
}

/** Throws a StrongroomError (4xx) naming the problem when the request is malformed. */
export function parseApiRequest(raw: RawHttpRequest, opts: ParseOptions): ApiRequest {
  const headers = raw.headers;
  if (opts.requireRequestHeader && !isTrue(firstHeader(headers, 'x-service-request', 'x-vault-request'))) {
    throw new StrongroomError('precondition_failed', "missing required header 'X-Service-Request' (or 'X-Vault-Request') with value true");
  }

  const isListVerb = raw.method === 'GET' && headers[LIST_MARKER_HEADER] === '1';
  const isScanVerb = raw.method === 'GET' && headers[SCAN_MARKER_HEADER] === '1';
  // Internal markers (set by list-method.ts): the core and audit see the verb, not the header.
  if (headers[LIST_MARKER_HEADER] !== undefined) delete headers[LIST_MARKER_HEADER];
  if (headers[SCAN_MARKER_HEADER] !== undefined) delete headers[SCAN_MARKER_HEADER];
  const method = isListVerb ? 'LIST' : isScanVerb ? 'SCAN' : raw.method;

  const q = raw.url.indexOf('?');
  const rawPath = q === -1 ? raw.url.slice(API_PREFIX.length) : raw.url.slice(API_PREFIX.length, q);
  const urlPath = normalisePath(decodePath(rawPath), 'path');
  const query = q === -1 ? {} : parseQuery(raw.url.slice(q + 1));

  const help = query.help !== undefined && queryBool(query.help, 'help', true);
  delete query.help;

  let operation: ApiOperation;
  switch (method) {
    case 'GET':
      // OpenBao's `?scan=true` beside Vault's `?list=true`.
      if (query.scan !== undefined && queryBool(query.scan, 'scan', false)) operation = 'scan';
      else operation = query.list !== undefined && queryBool(query.list, 'list', false) ? 'list' : 'read';
      break;
    case 'LIST':
      operation = 'list';
      break;
    case 'SCAN':
      operation = 'scan';
      break;
    case 'HEAD':
      // Answered like a read; node:http sends no body for HEAD.
      operation = 'read';
      break;
    case 'POST':
    case 'PUT':
      operation = 'write';
      break;
    case 'PATCH':
      operation = 'patch';
      break;
    case 'DELETE':
      operation = 'delete';
      break;
    default:
      throw new StrongroomError('unsupported_operation', `unsupported operation: HTTP method ${method}`);
  }
  if (operation === 'list' || operation === 'read' || operation === 'scan') {
    delete query.list;
    delete query.scan;
  }

  let data: Record<string, unknown>;
  let dataIsBody = false;
  if (operation === 'write' || operation === 'patch') {
    if (operation === 'patch') checkPatchContentType(headers['content-type']);
    const body = parseBody(raw.rawBody);
    data = body.data;
    dataIsBody = body.exact;
  } else {
    data = { ...query };
  }

  const namespace = normaliseNamespace(firstHeader(headers, 'x-service-namespace', 'x-vault-namespace'));
  return {
    id: randomUUID(),
    method,
    operation,
    help,
    path: namespace + urlPath,
    urlPath,
    token: extractToken(headers),
    data,
    url: raw.url,
    rawBody: raw.rawBody,
    dataIsBody,
    headers,
    remoteAddress: stripMappedPrefix(raw.remoteAddress ?? ''),
  };
}

function firstHeader(headers: IncomingHttpHeaders, ...names: string[]): string | undefined {
  for (const name of names) {
    const v = headers[name];
    const s = Array.isArray(v) ? v[0] : v;
    if (s !== undefined && s !== '') return s;
  }
  return undefined;
}

function isTrue(v: string | undefined): boolean {
  return v !== undefined && v.trim().toLowerCase() === 'true';
}

/** Token precedence: X-Service-Token, X-Vault-Token, then `Authorization: Bearer`. */
export function extractToken(headers: IncomingHttpHeaders): string | undefined {
  const direct = firstHeader(headers, 'x-service-token', 'x-vault-token');
  if (direct !== undefined) return direct.trim() || undefined;
  const auth = headers.authorization;
  if (auth === undefined) return undefined;
  const m = /^\s*Bearer\s+(\S+)\s*$/i.exec(auth);
  return m ? m[1] : undefined;
}

function decodePath(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw badRequest('invalid path: malformed percent-encoding');
  }
}

/**
 * Collapses repeated slashes and drops the leading one; keeps a trailing slash
 * (it matters for lists and ACL globs). Rejects NUL and `.`/`..` segments.
 */
export function normalisePath(path: string, what: 'path' | 'namespace'): string {
  if (path.includes('\0')) throw badRequest(`invalid ${what}: contains a NUL byte`);
  let p = path;
  if (p.includes('//')) p = p.replace(/\/{2,}/g, '/');
  if (p.startsWith('/')) p = p.slice(1);
  if (p.includes('.')) {
    for (const seg of p.split('/')) {
      if (seg === '.' || seg === '..') throw badRequest(`invalid ${what}: '.' and '..' segments are not allowed`);
    }
  }
  return p;
}

/** `ns1/ns2` or `/ns1/ns2/` -> `ns1/ns2/`; absent, empty or `root` -> ''. */
export function normaliseNamespace(header: string | undefined): string {
  if (header === undefined) return '';
  let ns = normalisePath(header.trim(), 'namespace');
  if (ns === '' || ns === 'root' || ns === 'root/') return '';
  if (!ns.endsWith('/')) ns += '/';
  return ns;
}

/** Query string to an object: single values as strings, repeated keys as arrays. `__proto__` is ignored. */
export function parseQuery(qs: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  if (qs === '') return out;
  for (const [k, v] of new URLSearchParams(qs)) {
    if (k === '__proto__') continue;
    const prev = out[k];
    if (prev === undefined) out[k] = v;
    else if (Array.isArray(prev)) prev.push(v);
    else out[k] = [prev, v];
  }
  return out;
}

const TRUE_VALUES = new Set(['1', 't', 'true']);
const FALSE_VALUES = new Set(['0', 'f', 'false']);

/** Go's strconv.ParseBool spellings, case-insensitive; a bare `?help` counts as `emptyMeans`. */
function queryBool(v: string | string[], name: string, emptyMeans: boolean): boolean {
  const s = (Array.isArray(v) ? v[0] ?? '' : v).toLowerCase();
  if (s === '') return emptyMeans;
  if (TRUE_VALUES.has(s)) return true;
  if (FALSE_VALUES.has(s)) return false;
  throw badRequest(`invalid value for query parameter '${name}': expected true or false`);
}

const PATCH_TYPES = new Set(['application/merge-patch+json', 'application/json']);

function checkPatchContentType(contentType: string | undefined): void {
  if (contentType === undefined) return;
  const base = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  if (base !== '' && !PATCH_TYPES.has(base)) {
    throw new StrongroomError('coded', 'PATCH requires Content-Type application/merge-patch+json', { status: 415 });
  }
}

const dropProto = (key: string, value: unknown) => (key === '__proto__' ? undefined : value);

/**
 * How deeply a request body may nest objects and arrays. JSON.parse itself
 * copes with any depth, but everything after it walks values recursively
 * (JSON.stringify to a plugin or to storage, audit hashing, validation), and
 * a stack overflow there would be a 500.
 */
export const MAX_JSON_DEPTH = 300;

/**
 * Whether `raw` nests deeper than `max`: one pass over the bytes, brackets
 * inside strings ignored. A string is crossed with the native indexOf (a
 * closing quote counts when an even number of backslashes precedes it), so a
 * near-limit base64 value costs no per-byte JavaScript.
 */
export function jsonDeeperThan(raw: Buffer, max: number): boolean {
  if (raw.length <= max) return false;
  let depth = 0;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c === 0x22) {
      let j = i;
      for (;;) {
        j = raw.indexOf(0x22, j + 1);
        if (j === -1) return false; // unterminated string: JSON.parse reports it
        let backslashes = 0;
        for (let k = j - 1; raw[k] === 0x5c; k--) backslashes++;
        if (backslashes % 2 === 0) break;
      }
      i = j;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/** Empty body -> {}; otherwise a JSON object, or a 400 naming what is wrong. */
export function parseJsonBody(raw: Buffer): Record<string, unknown> {
  return parseBody(raw).data;
}

/** parseJsonBody's object, and whether it is exactly what the text says (no `__proto__` key dropped, not an empty or `null` body). */
function parseBody(raw: Buffer): { data: Record<string, unknown>; exact: boolean } {
  if (raw.length === 0) return { data: {}, exact: false };
  if (jsonDeeperThan(raw, MAX_JSON_DEPTH)) throw badRequest(`failed to parse JSON input: nested deeper than ${MAX_JSON_DEPTH} levels`);
  let parsed: unknown;
  // The reviver is slow; it only runs when a `__proto__` key could be present (literally or \u-escaped).
  const risky = raw.includes('__proto__') || raw.includes('\\u');
  const text = raw.toString('utf8');
  if (text.trim() === '') return { data: {}, exact: false };
  try {
    parsed = risky ? JSON.parse(text, dropProto) : JSON.parse(text);
  } catch (err) {
    throw badRequest(`failed to parse JSON input: ${(err as Error).message}`);
  }
  if (parsed === null) return { data: {}, exact: false };
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw badRequest('failed to parse JSON input: the request body must be a JSON object');
  }
  return { data: parsed as Record<string, unknown>, exact: !risky };
}

function stripMappedPrefix(address: string): string {
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}
