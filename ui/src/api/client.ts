/**
 * The one module that talks to the server: the `/v1/` envelope, the token
 * and namespace headers, the `LIST` convention and the error shape. No
 * component calls fetch itself.
 */
import { currentSession } from './session';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly errors: string[],
  ) {
    super(errors.length ? errors.join('; ') : `request failed (HTTP ${status})`);
  }
}

/** The response envelope of a JSON answer. */
export interface Envelope<T = Record<string, unknown>> {
  request_id?: string;
  lease_id?: string;
  renewable?: boolean;
  lease_duration?: number;
  data?: T;
  warnings?: string[] | null;
  wrap_info?: unknown;
  auth?: {
    client_token: string;
    accessor: string;
    policies: string[];
    lease_duration: number;
    renewable: boolean;
  } | null;
  [key: string]: unknown;
}

type Query = Record<string, string | number | boolean | undefined>;

interface CallOptions {
  body?: unknown;
  query?: Query;
  /** Another token than the session's; null sends none (sign-in, seal status). */
  token?: string | null;
  namespace?: string;
}

async function call<T>(method: string, path: string, opts: CallOptions = {}): Promise<T> {
  const session = currentSession();
  const headers: Record<string, string> = { 'X-Service-Request': 'true' };
  const token = opts.token === undefined ? session?.token : opts.token;
  if (token) headers['X-Service-Token'] = token;
  const namespace = opts.namespace ?? session?.namespace ?? '';
  if (namespace) headers['X-Service-Namespace'] = namespace;
  let body: string | undefined;
  if (opts.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(opts.body);
  }
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined && v !== '') qs.set(k, String(v));
  const url = `/v1/${path.replace(/^\/+/, '')}${qs.size ? `?${qs}` : ''}`;
  const res = await fetch(url, { method, headers, body, credentials: 'omit', cache: 'no-store', referrerPolicy: 'no-referrer' });
  const text = await res.text();
  const json = (res.headers.get('content-type') ?? '').includes('json') && text ? safeJson(text) : undefined;
  if (!res.ok) {
    const errors = Array.isArray((json as { errors?: unknown } | undefined)?.errors) ? ((json as { errors: unknown[] }).errors.map(String)) : [];
    throw new ApiError(res.status, errors.length ? errors : [text && json === undefined ? text.slice(0, 300) : `HTTP ${res.status} ${res.statusText}`]);
  }
  return (json === undefined ? (text as unknown) : json) as T;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export const api = {
  read: <T = Record<string, unknown>>(path: string, query?: Query) => call<Envelope<T>>('GET', path, { query }),
  /** Keys under a directory path; an empty or missing directory is no keys (the server answers 404). */
  async list(path: string, query?: Query, namespace?: string): Promise<{ keys: string[]; keyInfo: Record<string, Record<string, unknown>> }> {
    const dir = path.endsWith('/') ? path : `${path}/`;
    try {
      const r = await call<Envelope<{ keys?: string[]; key_info?: Record<string, Record<string, unknown>> }>>('GET', dir, { query: { ...query, list: 'true' }, ...(namespace !== undefined ? { namespace } : {}) });
      return { keys: r.data?.keys ?? [], keyInfo: r.data?.key_info ?? {} };
    } catch (err) {
      if (err instanceof ApiError && err.status === 404 && err.errors.length <= 1) return { keys: [], keyInfo: {} };
      throw err;
    }
  },
  write: <T = Record<string, unknown>>(path: string, body: unknown = {}) => call<Envelope<T> | ''>('POST', path, { body }),
  put: (path: string, body: unknown = {}) => call<Envelope | ''>('PUT', path, { body }),
  patch: (path: string, body: unknown) => call<Envelope | ''>('PATCH', path, { body }),
  delete: (path: string, query?: Query) => call<Envelope | ''>('DELETE', path, { query }),
  /** A plain-text answer (sys/metrics in Prometheus format). */
  text: (path: string, query?: Query) => call<string>('GET', path, { query }),
  /** Calls made before a session exists (sign-in, seal status, unseal). */
  anonymous: {
    read: <T = Record<string, unknown>>(path: string, namespace = '') => call<T>('GET', path, { token: null, namespace }),
    write: <T = Record<string, unknown>>(path: string, body: unknown, namespace = '') => call<T>('POST', path, { token: null, namespace, body }),
    lookupSelf: (token: string, namespace: string) => call<Envelope>('GET', 'auth/token/lookup-self', { token, namespace }),
  },
};

/** The message to show for a failed call. */
export const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));
