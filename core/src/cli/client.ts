/**
 * The HTTP client behind the CLI. Reads STRONGROOM_ADDR, STRONGROOM_TOKEN,
 * STRONGROOM_NAMESPACE, STRONGROOM_CACERT, STRONGROOM_SKIP_VERIFY and
 * STRONGROOM_WRAP_TTL (the VAULT_* names are honoured too), and the token file
 * written by `login`.
 */
import { createReadStream, createWriteStream, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import http from 'node:http';
import https from 'node:https';
import { homedir } from 'node:os';
import { join } from 'node:path';


/** Keys asked of the server per page of a scan. */
const SCAN_PAGE = 1000;
export interface ClientOptions {
  address: string;
  token?: string;
  namespace?: string;
  caCert?: string;
  skipVerify?: boolean;
  /** `-wrap-ttl`: every request asks the server to wrap its response for this long. */
  wrapTtl?: string;
  /** `-output-curl-string`: the first request (not a preflight) is printed as a curl command instead of sent. */
  outputCurlString?: boolean;
}

export interface ApiResult {
  status: number;
  body: any;
  text: string;
}

export class ConnectionError extends Error {}

/** `-output-curl-string`: the request a verb was about to send, as a curl command; the runner prints it and exits 0. */
export class CurlString extends Error {}

/**
 * The server answered with a wrapping token instead of the response the verb
 * asked for (`-wrap-ttl`). It unwinds the verb, which could not read the data
 * it expects, and the runner prints the wrap info, as Vault's CLI does.
 */
export class WrappedResponse extends Error {
  constructor(readonly result: ApiResult) {
    super('response wrapped');
  }
}

/** A whole reply: its JSON body, or its text where it is not JSON. */
function replyOf(status: number, chunks: Buffer[]): ApiResult {
  const text = Buffer.concat(chunks).toString('utf8');
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  return { status, body, text };
}

const TOKEN_FILE = () => join(homedir(), '.strongroom-token');

const envOf = (name: string): string | undefined => process.env[`STRONGROOM_${name}`] ?? process.env[`VAULT_${name}`];

export function clientOptionsFromEnv(flags: Map<string, string>): ClientOptions {
  let token = envOf('TOKEN');
  if (!token) {
    try {
      token = readFileSync(TOKEN_FILE(), 'utf8').trim() || undefined;
    } catch {
      token = undefined;
    }
  }
  const skip = flags.get('tls-skip-verify') ?? envOf('SKIP_VERIFY');
  return {
    address: flags.get('address') ?? envOf('ADDR') ?? 'https://127.0.0.1:8200',
    ...(token ? { token } : {}),
    ...((flags.get('namespace') ?? envOf('NAMESPACE')) ? { namespace: (flags.get('namespace') ?? envOf('NAMESPACE'))! } : {}),
    ...((flags.get('ca-cert') ?? envOf('CACERT')) ? { caCert: (flags.get('ca-cert') ?? envOf('CACERT'))! } : {}),
    skipVerify: skip === 'true' || skip === '1',
    ...((flags.get('wrap-ttl') ?? envOf('WRAP_TTL')) ? { wrapTtl: (flags.get('wrap-ttl') ?? envOf('WRAP_TTL'))! } : {}),
    ...(flags.get('output-curl-string') === 'true' ? { outputCurlString: true } : {}),
  };
}

export function saveToken(token: string): void {
  writeFileSync(TOKEN_FILE(), token, { mode: 0o600 });
}

export function createClient(opts: ClientOptions) {
  const base = new URL(opts.address);
  const isTls = base.protocol === 'https:';
  const agentOpts = isTls
    ? { ca: opts.caCert ? readFileSync(opts.caCert) : undefined, rejectUnauthorized: !opts.skipVerify, keepAlive: true }
    : { keepAlive: true };
  const agent = isTls ? new https.Agent(agentOpts) : new http.Agent(agentOpts);

  function request(
    method: string,
    path: string,
    body?: unknown,
    query?: Record<string, string>,
    extra: { contentType?: string; token?: string; noWrap?: boolean; preflight?: boolean; onChunk?: (s: string) => void; signal?: AbortSignal } = {},
  ): Promise<ApiResult> {
    const url = new URL(`/v1/${path.replace(/^\/+/, '')}`, base);
    for (const [k, v] of Object.entries(query ?? {})) url.searchParams.set(k, v);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { 'X-Service-Request': 'true' };
    const token = extra.token ?? opts.token;
    if (token) headers['X-Service-Token'] = token;
    if (opts.namespace) headers['X-Service-Namespace'] = opts.namespace;
    const wrap = opts.wrapTtl !== undefined && !extra.noWrap;
    if (wrap) headers['X-Service-Wrap-TTL'] = opts.wrapTtl!;
    if (payload) {
      headers['Content-Type'] = extra.contentType ?? 'application/json';
      headers['Content-Length'] = String(payload.length);
    }
    if (opts.outputCurlString && !extra.preflight) return Promise.reject(new CurlString(curlString(method, url, headers, payload)));
    const mod = isTls ? https : http;
    return new Promise((resolve, reject) => {
      const req = mod.request(url, { method, headers, agent, ...(extra.signal ? { signal: extra.signal } : {}) }, (res) => {
        const chunks: Buffer[] = [];
        // A stream (sys/monitor) goes to onChunk as it comes; an error answer is read whole as usual.
        const streaming = extra.onChunk !== undefined && (res.statusCode ?? 0) < 400;
        if (streaming) res.setEncoding('utf8');
        res.on('data', (c: Buffer | string) => (streaming ? extra.onChunk!(c as string) : chunks.push(c as Buffer)));
        if (streaming) res.on('close', () => resolve({ status: res.statusCode ?? 0, body: null, text: '' }));
        res.on('end', () => {
          const result = replyOf(res.statusCode ?? 0, chunks);
          const parsed = result.body;
          if (wrap && (parsed as { wrap_info?: unknown } | null)?.wrap_info) reject(new WrappedResponse(result));
          else resolve(result);
        });
      });
      // A server that cannot be reached is the operator's to fix (exit 1), not an answer from it.
      req.on('error', (err) => (extra.signal?.aborted ? resolve({ status: 0, body: null, text: '' }) : reject(new ConnectionError(`${method} ${url.origin}${url.pathname}: ${err.message}`))));
      if (payload) req.write(payload);
      req.end();
    });
  }

  /**
   * A request whose body goes out of a file, or whose successful reply goes into
   * one, streamed (a snapshot: never held whole). The downloaded file is written
   * beside and renamed into place only when complete. An error reply is read as usual.
   */
  function transfer(method: 'GET' | 'POST', path: string, file: { upload?: string; download?: string }): Promise<ApiResult> {
    const url = new URL(`/v1/${path.replace(/^\/+/, '')}`, base);
    const headers: Record<string, string> = { 'X-Service-Request': 'true' };
    if (opts.token) headers['X-Service-Token'] = opts.token;
    if (opts.namespace) headers['X-Service-Namespace'] = opts.namespace;
    if (file.upload) {
      headers['Content-Type'] = 'application/octet-stream';
      headers['Content-Length'] = String(statSync(file.upload).size);
    }
    const mod = isTls ? https : http;
    return new Promise((resolve, reject) => {
      const req = mod.request(url, { method, headers, agent }, (res) => {
        const status = res.statusCode ?? 0;
        if (file.download && status === 200) {
          const partial = `${file.download}.partial`;
          pipeline(res, createWriteStream(partial, { mode: 0o600 }))
            .then(() => {
              if (!res.complete) throw new Error('the server cut the transfer short');
              renameSync(partial, file.download!);
              resolve({ status, body: null, text: '' });
            })
            .catch((err: unknown) => {
              rmSync(partial, { force: true });
              reject(new ConnectionError(`${method} ${url.origin}${url.pathname}: ${err instanceof Error ? err.message : String(err)}`));
            });
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(replyOf(status, chunks)));
      });
      req.on('error', (err) => reject(new ConnectionError(`${method} ${url.origin}${url.pathname}: ${err.message}`)));
      if (file.upload) {
        // A server that refuses early closes the connection: the reply still arrives.
        pipeline(createReadStream(file.upload), req).catch(() => undefined);
      } else req.end();
    });
  }

  return {
    /** GET a streamed reply into a file. */
    download: (path: string, file: string) => transfer('GET', path, { download: file }),
    /** POST a file as the body, streamed. */
    upload: (path: string, file: string) => transfer('POST', path, { upload: file }),
    address: base.origin,
    read: (path: string, query?: Record<string, string>) => request('GET', path, undefined, query),
    /** A read the CLI makes for itself (e.g. kv's mount lookup): never wrapped, as in Vault. */
    preflight: (path: string) => request('GET', path, undefined, undefined, { noWrap: true, preflight: true }),
    list: (path: string) => request('GET', path, undefined, { list: 'true' }),
    /**
     * Every key below `path` at any depth (OpenBao's SCAN, `?scan=true`), paged by the server
     * (`after`/`limit`): the first answer that is not a 200 ends it and is returned as is.
     */
    async scan(path: string) {
      const keys: string[] = [];
      for (;;) {
        const r = await request('GET', path, undefined, { scan: 'true', limit: String(SCAN_PAGE), ...(keys.length ? { after: keys[keys.length - 1]! } : {}) });
        if (r.status !== 200) return keys.length && r.status === 404 ? { ...r, status: 200, keys } : { ...r, keys };
        const page = ((r.body as { data?: { keys?: string[] } } | null)?.data?.keys ?? []) as string[];
        keys.push(...page);
        if (page.length < SCAN_PAGE) return { ...r, keys };
      }
    },
    write: (path: string, data: unknown) => request('POST', path, data ?? {}),
    put: (path: string, data: unknown) => request('PUT', path, data ?? {}),
    /** JSON merge patch (RFC 7396), as `vault patch` and `kv patch` send it. */
    patch: (path: string, data: unknown) => request('PATCH', path, data ?? {}, undefined, { contentType: 'application/merge-patch+json' }),
    delete: (path: string, query?: Record<string, string>) => request('DELETE', path, undefined, query),
    /** A streamed read (sys/monitor): each chunk to `onChunk` until the server ends it or `signal` aborts. */
    stream: (path: string, query: Record<string, string>, onChunk: (s: string) => void, signal?: AbortSignal) => request('GET', path, undefined, query, { noWrap: true, onChunk, ...(signal ? { signal } : {}) }),
    request,
    close: () => agent.destroy(),
  };
}

export type Client = ReturnType<typeof createClient>;

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The request as Vault's -output-curl-string prints it: the token never
 * appears (`$(strongroom print token)` stands for it), the rest does.
 */
function curlString(method: string, url: URL, headers: Record<string, string>, payload: Buffer | undefined): string {
  const parts = ['curl'];
  if (method !== 'GET') parts.push('-X', method);
  for (const [k, v] of Object.entries(headers)) {
    if (k === 'Content-Length') continue;
    parts.push('-H', k === 'X-Service-Token' ? `"${k}: $(strongroom print token)"` : shellQuote(`${k}: ${v}`));
  }
  if (payload) parts.push('-d', shellQuote(payload.toString('utf8')));
  parts.push(shellQuote(url.toString()));
  return parts.join(' ');
}
