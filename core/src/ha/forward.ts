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
 * cluster's token HMAC key, which lives behind the barrier. An unsigned or
 * badly signed header is ignored, never trusted.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import * as http from 'node:http';
import * as https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { StrongroomError } from '@strongroom/sdk-plugin/host';
import type { ApiReply, ApiRequest } from '../http/types.js';

export const FORWARDED_FOR_HEADER = 'x-strongroom-forwarded-for';
const NO_FORWARD_HEADERS = ['x-service-no-request-forwarding', 'x-vault-no-request-forwarding'];
const FORWARD_TIMEOUT_MS = 90_000;
/** A signed client address older than this is ignored (a replayed header). */
const MAX_SKEW_MS = 60_000;
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authorization', 'proxy-connection', 'host', 'content-length', FORWARDED_FOR_HEADER]);
/** Reply headers passed back to the client besides the body's type (the CORS ones: the active node applies sys/config/cors). */
const REPLY_HEADERS = ['location', 'retry-after', 'www-authenticate', 'access-control-allow-origin', 'vary'];

/** The key that signs forwarded client addresses, derived from the token HMAC key every node can read. */
export function forwardingKey(tokenHmacKey: Buffer): Buffer {
  return createHmac('sha256', tokenHmacKey).update('strongroom request forwarding v1').digest();
}

const signature = (key: Buffer, addr: string, ts: string, req: Pick<ApiRequest, 'method' | 'url'>) =>
  createHmac('sha256', key).update(`${ts}\n${addr}\n${req.method}\n${req.url}`).digest('hex');

/** The client address a forwarding node vouches for, or null when the header is absent or not genuine. */
export function forwardedClient(req: Pick<ApiRequest, 'method' | 'url' | 'headers'>, key: Buffer | null, now = Date.now()): string | null {
  const raw = req.headers[FORWARDED_FOR_HEADER];
  if (key === null || typeof raw !== 'string') return null;
  const [addr, ts, sig] = raw.split(';');
  if (!addr || !ts || !sig || !/^\d+$/.test(ts) || Math.abs(now - Number(ts)) > MAX_SKEW_MS) return null;
  const want = Buffer.from(signature(key, addr, ts, req), 'hex');
  const got = Buffer.from(sig, 'hex');
  return got.length === want.length && timingSafeEqual(got, want) ? addr : null;
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
  close(): void;
}

export function createForwarder(): Forwarder {
  // Kept-alive connections to the active node: no TCP set-up per forwarded request.
  const agents = { http: new http.Agent({ keepAlive: true, maxSockets: 128 }), https: new https.Agent({ keepAlive: true, maxSockets: 128 }) };
  return {
    forward(req, leaderAddress, key) {
      const target = new URL(req.url, leaderAddress);
      const headers: http.OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) headers[name] = value;
      if (req.rawBody.length > 0) headers['content-length'] = req.rawBody.length;
      const ts = String(Date.now());
      headers[FORWARDED_FOR_HEADER] = `${req.remoteAddress};${ts};${signature(key, req.remoteAddress, ts, req)}`;
      const secure = target.protocol === 'https:';
      return new Promise<ApiReply>((resolve, reject) => {
        const out = (secure ? https : http).request(target, { method: req.method, headers, agent: secure ? agents.https : agents.http, timeout: FORWARD_TIMEOUT_MS }, (res) => {
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
        });
        out.on('timeout', () => out.destroy(new Error('timed out')));
        out.on('error', (err) => reject(new StrongroomError('unavailable', `forwarding to the active node failed: ${err.message}`)));
        out.end(req.rawBody);
      });
    },
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}
