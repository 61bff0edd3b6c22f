/**
 * A client of RabbitMQ's management HTTP API (the rabbitmq_management plugin):
 * the few calls the engine needs, over Node's fetch (keep-alive connections,
 * one pool per process).
 *
 * Security: the administrator's password travels only in the Authorization
 * header and a new user's password only in a request body. Every error this
 * module raises is built from the broker's status and reason or the network
 * error's code, and is scrubbed of both passwords before it leaves, because a
 * proxy or broker may echo a request back in its error text.
 */
import { codedError, scrubSecrets, type StrongroomError } from '@strongroom/sdk-plugin';

export interface ManagementConnection {
  /** Base URL of the management API, e.g. http://127.0.0.1:15672 (a path prefix is kept). */
  uri: string;
  username: string;
  password: string;
}

export interface VhostPermissions {
  configure: string;
  write: string;
  read: string;
}

export interface TopicPermissions {
  write: string;
  read: string;
}

export interface ManagementUser {
  name: string;
  tags: string[];
}

export interface ManagementClient {
  /** The administrator's credentials work and may manage users (lists users, as Vault checks). */
  verify(): Promise<void>;
  /** Creates (or replaces) a user with a password and management tags. */
  putUser(name: string, password: string, tags: readonly string[]): Promise<void>;
  setPermissions(vhost: string, user: string, p: VhostPermissions): Promise<void>;
  setTopicPermissions(vhost: string, user: string, exchange: string, p: TopicPermissions): Promise<void>;
  /** Deletes a user; `false` when it did not exist (already deleted counts as done). */
  deleteUser(name: string): Promise<boolean>;
  /** The user, or null when it does not exist. */
  getUser(name: string): Promise<ManagementUser | null>;
}

/** Each call's deadline: a broker that hangs fails the request instead of holding it. */
const DEFAULT_TIMEOUT_MS = 15_000;

/** The upstream failed or could not be reached: a 502 whose message names what failed, never a password. */
const upstreamError = (message: string): StrongroomError => codedError(502, message);

/**
 * Checks a connection_uri: an http(s) URL without credentials in it (they go
 * in username/password, where they are stored as secrets and never returned).
 * Returns the base without a trailing slash. Throws a message naming the field.
 */
export function normalizeBaseUri(uri: string): string {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    throw new Error('connection_uri: not a valid URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('connection_uri: must be an http:// or https:// URL of the management API');
  if (u.username || u.password) throw new Error('connection_uri: must not contain credentials; send them as username and password');
  if (u.search || u.hash) throw new Error('connection_uri: must not have a query or fragment');
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
}

export function createManagementClient(conn: ManagementConnection, opts: { timeoutMs?: number } = {}): ManagementClient {
  const base = normalizeBaseUri(conn.uri);
  const where = new URL(base).host;
  const auth = `Basic ${Buffer.from(`${conn.username}:${conn.password}`, 'utf8').toString('base64')}`;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;

  /** One call; `secrets` are scrubbed from any error besides the admin's password. */
  async function call(method: string, path: string, what: string, body?: unknown, secrets: string[] = []): Promise<{ status: number; json: unknown }> {
    const scrub = (s: string) => scrubSecrets(s, [conn.password, ...secrets]);
    let res: Response;
    try {
      res = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw upstreamError(scrub(`${what}: RabbitMQ management API at ${where} unreachable: ${networkReason(err)}`));
    }
    const text = await res.text().catch(() => '');
    if (res.status >= 200 && res.status < 300) return { status: res.status, json: parseJson(text) };
    if (res.status === 404 && (method === 'DELETE' || method === 'GET')) return { status: 404, json: null };
    throw upstreamError(scrub(`${what}: RabbitMQ answered ${res.status}${brokerReason(text)}`));
  }

  const seg = (s: string) => encodeURIComponent(s);

  return {
    async verify() {
      await call('GET', '/api/users?columns=name', 'verifying the connection');
    },
    async putUser(name, password, tags) {
      // A comma-separated string: every broker version since 3.0 accepts it (a list only since 3.9).
      await call('PUT', `/api/users/${seg(name)}`, `creating user ${name}`, { password, tags: tags.join(',') }, [password]);
    },
    async setPermissions(vhost, user, p) {
      await call('PUT', `/api/permissions/${seg(vhost)}/${seg(user)}`, `setting permissions of ${user} in vhost ${vhost}`, {
        configure: p.configure,
        write: p.write,
        read: p.read,
      });
    },
    async setTopicPermissions(vhost, user, exchange, p) {
      await call('PUT', `/api/topic-permissions/${seg(vhost)}/${seg(user)}`, `setting topic permissions of ${user} on exchange ${exchange} in vhost ${vhost}`, {
        exchange,
        write: p.write,
        read: p.read,
      });
    },
    async deleteUser(name) {
      const { status } = await call('DELETE', `/api/users/${seg(name)}`, `deleting user ${name}`);
      return status !== 404;
    },
    async getUser(name) {
      const { status, json } = await call('GET', `/api/users/${seg(name)}`, `reading user ${name}`);
      if (status === 404) return null;
      const u = json as { name?: unknown; tags?: unknown };
      // 3.9+ answers a list, older brokers a comma-separated string.
      const tags = Array.isArray(u.tags) ? u.tags.map(String) : typeof u.tags === 'string' ? u.tags.split(',').filter(Boolean) : [];
      return { name: String(u.name ?? name), tags };
    },
  };
}

function parseJson(text: string): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** The broker's own explanation (`{"error": ..., "reason": ...}`), short. */
function brokerReason(text: string): string {
  const j = parseJson(text) as { error?: unknown; reason?: unknown } | null;
  const reason = j && typeof j === 'object' ? [j.error, j.reason].filter((x) => typeof x === 'string' && x).join(': ') : '';
  return reason ? ` (${reason.slice(0, 300)})` : '';
}

/** ECONNREFUSED, a timeout, a TLS failure...: the code, never the request. */
function networkReason(err: unknown): string {
  const e = err as { name?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError') return 'timed out';
  if (e?.cause?.code) return e.cause.code;
  if (e?.cause?.message) return e.cause.message.slice(0, 200);
  return err instanceof Error ? err.message.slice(0, 200) : 'network error';
}
