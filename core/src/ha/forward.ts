/**
 * Request forwarding from a standby to the active node: the request goes out
 * as it came in (method, target, headers, body bytes) to the active node's
 * api_addr, and its reply comes back as it is, so the client sees what the
 * active node answered. With `X-Service-No-Request-Forwarding` (or its
 * `X-Vault-` spelling) the standby answers a 307 to the active node instead.
 *
 * What must stay true: the active node sees the CLIENT's address (bound
 * CIDRs of tokens are checked against it), carried in a header that only a
 * node of the cluster can produce: it is signed with a key derived from the
 * cluster's token HMAC key, which lives behind the barrier. The signature
 * covers the whole request (method, target, every header the core acts on,
 * the token among them, and a hash of the body), the time, a nonce and the
 * node it was sent to; the receiving node refuses a request whose header does
 * not verify, is older than the skew allowed, was meant for another node, or
 * whose nonce it has already seen (a replay), so a recorded forwarded request
 * can neither be replayed nor carry another body, token or namespace.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import * as http from 'node:http';
import * as https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { StrongroomError } from '@strongroom/sdk-plugin/host';
import type { EventSink, Frame } from '../events/hub.js';
import type { ApiReply, ApiRequest } from '../http/types.js';

export const FORWARDED_FOR_HEADER = 'x-strongroom-forwarded-for';
const NO_FORWARD_HEADERS = ['x-service-no-request-forwarding', 'x-vault-no-request-forwarding'];
const FORWARD_TIMEOUT_MS = 90_000;
/** A forwarded request signed further than this from the receiver's clock is refused. */
const MAX_SKEW_MS = 60_000;
/** Nonces remembered at most (about a minute of heavy forwarding); past it the oldest go and their age becomes the floor. */
const MAX_REMEMBERED_NONCES = 200_000;
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authorization', 'proxy-connection', 'host', 'content-length', FORWARDED_FOR_HEADER]);
/**
 * The request headers that change what the core does with a request: the
 * token, namespace, wrapping and request-marker headers, the
 * body's type and the origin (CORS). The signature binds each (absent ones
 * too), so none can be added, dropped or changed on a recorded request.
 */
const SIGNED_HEADERS = [
  'authorization',
  'x-service-token',
  'x-vault-token',
  'x-service-namespace',
  'x-vault-namespace',
  'x-service-wrap-ttl',
  'x-vault-wrap-ttl',
  'x-service-request',
  'x-vault-request',
  'content-type',
  'origin',
] as const;
/** Reply headers passed back to the client besides the body's type (the CORS ones: the active node applies sys/config/cors; the change index of a write). */
const REPLY_HEADERS = ['location', 'retry-after', 'www-authenticate', 'access-control-allow-origin', 'vary', 'x-service-index', 'x-vault-index'];

/** The key that signs forwarded requests, derived from the token HMAC key every node can read. */
export function forwardingKey(tokenHmacKey: Buffer): Buffer {
  return createHmac('sha256', tokenHmacKey).update('strongroom request forwarding v1').digest();
}

type Signed = Pick<ApiRequest, 'method' | 'url' | 'headers' | 'rawBody'>;

/** HMAC over everything the request is: who, when, which nonce, to which node, and the request itself. */
function signature(key: Buffer, f: { addr: string; ts: string; nonce: string; target: string }, req: Signed): string {
  const mac = createHmac('sha256', key).update(`strongroom-forward-v2\n${f.ts}\n${f.nonce}\n${f.target}\n${f.addr}\n${req.method}\n${req.url}\n`);
  for (const name of SIGNED_HEADERS) mac.update(`${name}:${JSON.stringify(req.headers[name] ?? null)}\n`);
  return mac.update(createHash('sha256').update(req.rawBody).digest('hex')).digest('hex');
}

/** The forwarding header for a request sent to `target` (the active node's api_addr). */
export function signForwarded(req: Signed & Pick<ApiRequest, 'remoteAddress'>, key: Buffer, target: string, now = Date.now()): string {
  const f = { addr: req.remoteAddress, ts: String(now), nonce: randomBytes(16).toString('hex'), target };
  return `${f.addr};${f.ts};${f.nonce};${signature(key, f, req)}`;
}

/**
 * Remembers the nonces of the forwarded requests accepted within the skew
 * window, so each is accepted once. Bounded: past its size the oldest is
 * forgotten and no request signed at or before its time is accepted any more.
 */
export function createReplayGuard(opts: { windowMs?: number; max?: number } = {}) {
  const windowMs = opts.windowMs ?? MAX_SKEW_MS;
  const max = opts.max ?? MAX_REMEMBERED_NONCES;
  /** nonce -> [signed time, forget after], in arrival order. */
  const seen = new Map<string, [number, number]>();
  let floor = -Infinity;
  return {
    /** True the first time a nonce signed at `ts` is claimed; false for a replay. */
    claim(nonce: string, ts: number, now: number): boolean {
      for (const [n, [, until]] of seen) {
        if (until >= now) break;
        seen.delete(n);
      }
      if (ts <= floor || seen.has(nonce)) return false;
      seen.set(nonce, [ts, ts + 2 * windowMs]);
      if (seen.size > max) {
        const [oldest, [oldestTs]] = seen.entries().next().value as [string, [number, number]];
        seen.delete(oldest);
        floor = Math.max(floor, oldestTs);
      }
      return true;
    },
  };
}
export type ReplayGuard = ReturnType<typeof createReplayGuard>;

/**
 * A forwarded request as the active node judges it: none (no header), the
 * client's address its standby vouches for, or refused (with the reason, for
 * the log and the error).
 */
export function verifyForwarded(
  req: Signed,
  deps: { key: Buffer; self: string; replays: ReplayGuard },
  now = Date.now(),
): { client: string } | { refused: string } | null {
  const raw = req.headers[FORWARDED_FOR_HEADER];
  if (raw === undefined) return null;
  if (typeof raw !== 'string') return { refused: 'malformed forwarding header' };
  const [addr, ts, nonce, sig, ...rest] = raw.split(';');
  if (!addr || !ts || !nonce || !sig || rest.length > 0 || !/^\d+$/.test(ts) || !/^[0-9a-f]{32}$/.test(nonce)) return { refused: 'malformed forwarding header' };
  const want = Buffer.from(signature(deps.key, { addr, ts, nonce, target: deps.self }, req), 'hex');
  const got = Buffer.from(sig, 'hex');
  if (got.length !== want.length || !timingSafeEqual(got, want)) return { refused: 'forwarding signature does not match the request' };
  if (Math.abs(now - Number(ts)) > MAX_SKEW_MS) return { refused: 'forwarded request too old' };
  if (!deps.replays.claim(nonce, Number(ts), now)) return { refused: 'forwarded request replayed' };
  return { client: addr };
}

export function wantsRedirect(headers: IncomingHttpHeaders): boolean {
  return NO_FORWARD_HEADERS.some((h) => {
    const v = headers[h];
    return typeof v === 'string' ? v !== '' : Array.isArray(v) && v.length > 0;
  });
}

/** Vault's answer when a standby is asked not to forward: 307 to the same target on the active node. */
export function redirectReply(req: Pick<ApiRequest, 'url'>, leaderAddress: string): ApiReply {
  return { status: 307, headers: { Location: new URL(req.url, leaderAddress).toString() } };
}

export interface Forwarder {
  forward(req: ApiRequest, leaderAddress: string, key: Buffer): Promise<ApiReply>;
  /**
   * An event subscription (sys/events/subscribe): the active node's stream is
   * relayed frame by frame, so a client of a standby gets the events the active
   * node publishes (its ACL checks, drops and Last-Event-ID included); any other
   * answer comes back as `forward` would give it.
   */
  forwardEvents(req: ApiRequest, leaderAddress: string, key: Buffer): Promise<ApiReply>;
  close(): void;
}

/** A standby's client asks for events: relayed from the active node (a request path, namespace prefix or not). */
export function isEventSubscription(req: Pick<ApiRequest, 'method' | 'urlPath'>): boolean {
  return req.method === 'GET' && /(^|\/)sys\/events\/subscribe\//.test(req.urlPath);
}

export function createForwarder(): Forwarder {
  // Kept-alive connections to the active node: no TCP set-up per forwarded request.
  const agents = { http: new http.Agent({ keepAlive: true, maxSockets: 128 }), https: new https.Agent({ keepAlive: true, maxSockets: 128 }) };
  // Event streams hold their connection for as long as they last: never the pooled ones.
  const streamAgents = { http: new http.Agent({ keepAlive: false }), https: new https.Agent({ keepAlive: false }) };
  const relays = new Set<http.ClientRequest>();
  const send = (req: ApiRequest, leaderAddress: string, key: Buffer, stream: boolean, onResponse: (res: http.IncomingMessage) => void, reject: (e: unknown) => void) => {
    const target = new URL(req.url, leaderAddress);
    const headers: http.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) headers[name] = value;
    if (req.rawBody.length > 0) headers['content-length'] = req.rawBody.length;
    headers[FORWARDED_FOR_HEADER] = signForwarded(req, key, leaderAddress);
    const secure = target.protocol === 'https:';
    const pool = stream ? streamAgents : agents;
    const out = (secure ? https : http).request(target, { method: req.method, headers, agent: secure ? pool.https : pool.http, timeout: FORWARD_TIMEOUT_MS }, onResponse);
    out.on('timeout', () => out.destroy(new Error('timed out')));
    out.on('error', (err) => reject(new StrongroomError('unavailable', `forwarding to the active node failed: ${err.message}`)));
    out.end(req.rawBody);
    return out;
  };
  /** The whole answer, as the client gets it. */
  const buffered = (req: ApiRequest, res: http.IncomingMessage, resolve: (r: ApiReply) => void, reject: (e: unknown) => void) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('error', (err) => reject(new StrongroomError('unavailable', `forwarding to the active node failed: ${err.message}`)));
    res.on('end', () => {
      const replyHeaders: Record<string, string> = {};
      for (const h of REPLY_HEADERS) {
        const v = res.headers[h];
        if (typeof v === 'string') replyHeaders[h] = v;
      }
      const body = Buffer.concat(chunks);
      resolve({
        status: res.statusCode ?? 502,
        headers: replyHeaders,
        ...(body.length > 0 || req.method === 'HEAD' ? { body: { raw: body, contentType: res.headers['content-type'] ?? 'application/json' } } : {}),
      });
    });
  };
  return {
    forward(req, leaderAddress, key) {
      return new Promise<ApiReply>((resolve, reject) => void send(req, leaderAddress, key, false, (res) => buffered(req, res, resolve, reject), reject));
    },
    forwardEvents(req, leaderAddress, key) {
      return new Promise<ApiReply>((resolve, reject) => {
        const out = send(req, leaderAddress, key, true, (res) => {
          if (res.statusCode !== 200 || !String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) return buffered(req, res, resolve, reject);
          relays.add(out);
          res.once('close', () => relays.delete(out));
          resolve({ status: 200, eventStream: { open: (sink) => relayEvents(res, out, sink) } });
        }, reject);
      });
    },
    close() {
      agents.http.destroy();
      agents.https.destroy();
      for (const r of relays) r.destroy();
      streamAgents.http.destroy();
      streamAgents.https.destroy();
    },
  };
}

/**
 * Relays the active node's server-sent events to a local sink, frame by
 * frame: the upstream is paused while the sink is full (so the active node's
 * own queue for this subscriber fills and drops, as for a slow client of its
 * own), and either side's end ends the other.
 */
function relayEvents(res: http.IncomingMessage, out: http.ClientRequest, sink: EventSink): void {
  let buf = '';
  let ended: string | null = null;
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    buf += chunk;
    let at: number;
    while ((at = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, at);
      buf = buf.slice(at + 2);
      const frame: Frame = { data: '' };
      for (const line of block.split('\n')) {
        if (line.startsWith('id: ')) frame.id = line.slice(4);
        else if (line.startsWith('event: ')) frame.name = line.slice(7);
        else if (line.startsWith('data: ')) frame.data += line.slice(6);
      }
      if (frame.data === '') continue; // a heartbeat comment
      if (frame.name === 'end') {
        ended = (JSON.parse(frame.data) as { reason?: string }).reason ?? 'ended by the active node';
        continue;
      }
      if (!sink.send(frame)) {
        res.pause();
        sink.onDrain(() => res.resume());
      }
    }
  });
  res.once('close', () => sink.end(ended ?? 'the active node closed the stream'));
  sink.onClose(() => out.destroy());
}
