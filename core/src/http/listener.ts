/**
 * One API listener: TCP (or TLS) accept -> LIST verb translation -> the API
 * handler for `/v1/` (express 5, one catch-all route, for everything else) ->
 * ApiRequest -> the core's handler -> reply.
 *
 * What must stay true:
 * - A request body is read once, by hand, and never beyond `maxRequestSize`:
 *   a larger declared or streamed body gets 413 and the connection is closed.
 *   The one exception is a streamed upload (`streamedUpload`, a snapshot
 *   restore): its body goes to the handler unread, and a connection whose
 *   body the handler did not finish is closed after the reply.
 * - A StreamBody reply is piped to the client as it is produced (chunked); a
 *   failure midway cuts the connection, so the client sees a short body.
 * - Outside `/v1/` only the web UI is served (ui.ts, when enabled); anything else is a JSON 404.
 * - Errors from the core that are not StrongroomErrors reach the client as
 *   'internal error' only (see response.ts); the detail goes to the log.
 *
 * Per-request cost matters (see DESIGN.md section 2; issue 20): an API request
 * goes from node:http straight to its handler, never through express's
 * app.handle (which swaps the prototypes of req and res and walks its router on
 * every request: about a fifth of the core's time per kv read here); express
 * keeps the rest with one catch-all route, no ETag, no x-powered-by. A reply is
 * one writeHead/end: headers and body leave in one write.
 */
import { readFile } from 'node:fs/promises';
import * as http from 'node:http';
import * as net from 'node:net';
import * as tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import { Readable, type Duplex } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import express from 'express';
import { WebSocketServer } from 'ws';
import { z } from 'zod';
import type { Logger } from '@strongroom/sdk-plugin/host';
import { wrapConnection } from './list-method.js';
import { API_PREFIX, parseApiRequest } from './request.js';
import { errorReply, renderReply, replyForError, writeRendered } from './response.js';
import type { Cors } from './cors.js';
import { sseSink, webSocketSink } from './event-stream.js';
import { uiRouter } from './ui.js';
import type { ApiHandler, ApiReply, ReplyStream, StreamBody } from './types.js';

/** Vault's default `max_request_size`: 32 MiB. */
const DEFAULT_MAX_REQUEST_SIZE = 32 * 1024 * 1024;
/** How long close() lets in-flight requests finish before it cuts their connections. */
const CLOSE_GRACE_MS = 2000;

const optionsSchema = z.object({
  address: z
    .string()
    .regex(/^(\[[0-9a-fA-F:.]+\]|[^:\s[\]]*):\d{1,5}$/, 'address must be host:port (IPv6 as [addr]:port)'),
  tls: z.object({ certFile: z.string().min(1), keyFile: z.string().min(1) }).nullish(),
  /** Bytes. 0 or absent: 32 MiB; negative: no limit (as Vault's max_request_size). */
  maxRequestSize: z.number().int().optional(),
  requireRequestHeader: z.boolean().optional(),
  /** The built web UI's directory, served at /ui/; absent or null: no UI. */
  uiDirectory: z.string().min(1).nullish(),
});

export type ListenerOptions = z.input<typeof optionsSchema>;

export interface ListenerDeps {
  logger?: Pick<Logger, 'error' | 'warn'>;
  /** Cross-origin policy (sys/config/cors); absent: no CORS handling. */
  cors?: Pick<Cors, 'verdict'>;
  /** Whether a POST/PUT to this `/v1/` path (as received) hands its body to the handler unread (ApiRequest.bodyStream). */
  streamedUpload?: (url: string) => boolean;
}

export interface Listener {
  /** Binds and starts accepting. Port 0 picks a free port; the bound one is returned. */
  start(): Promise<{ host: string; port: number }>;
  /** Stops accepting, lets in-flight requests finish (briefly), closes every connection. */
  close(): Promise<void>;
}

class RequestTooLarge extends Error {}

const CLIENT_ERRORS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'request headers too large'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, 'chunk extensions too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'request timeout'],
  HPE_INVALID_METHOD: [405, 'unsupported HTTP method'],
};

export function createListener(options: ListenerOptions, handle: ApiHandler, deps: ListenerDeps = {}): Listener {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new Error(`invalid listener options: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  const opts = parsed.data;
  const { host, port } = splitAddress(opts.address);
  const maxRequestSize = !opts.maxRequestSize ? DEFAULT_MAX_REQUEST_SIZE : opts.maxRequestSize < 0 ? Infinity : opts.maxRequestSize;
  const parseOpts = { requireRequestHeader: opts.requireRequestHeader ?? false };
  const logger = deps.logger ?? stderrLogger;

  const app = express();
  app.set('etag', false);
  app.set('x-powered-by', false);
  if (opts.uiDirectory) app.use(uiRouter(opts.uiDirectory));
  // The catch-all route: nothing else outside /v1/ is served; routing is the mount table's job.
  app.use((req, res) => send(res, errorReply(404, ['not found']), req.method === 'HEAD'));

  /** An API request, in order with the others on its connection. */
  const dispatch = (req: http.IncomingMessage, res: http.ServerResponse) => {
    // Node emits every pipelined request on a connection at once; they run one after another, as a
    // client that pipelines a write and then a read expects (RFC 9112 9.3.2: only safe methods may overlap).
    const socket = req.socket;
    const before = pending.get(socket);
    const run = () => serve(req, res).catch((err: unknown) => logger.error('serving a request failed', { error: err instanceof Error ? err.message : String(err) }));
    const done = before ? before.then(run) : run();
    pending.set(socket, done);
    void done.then(() => {
      if (pending.get(socket) === done) pending.delete(socket);
    });
  };
  /** The last request still being served on each connection. */
  const pending = new WeakMap<object, Promise<void>>();

  async function serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    const method = req.method ?? 'GET';
    const head = method === 'HEAD';
    const origin = req.headers.origin;
    const cors = deps.cors?.verdict(method, Array.isArray(origin) ? origin[0] : origin) ?? null;
    if (cors && 'answer' in cors) {
      // A refused origin or a preflight is answered here. An unread body would be taken for the next request: close.
      const unreadBody = (req.headers['content-length'] ?? '0') !== '0' || req.headers['transfer-encoding'] !== undefined;
      send(res, unreadBody ? { ...cors.answer, headers: { ...cors.answer.headers, Connection: 'close' } } : cors.answer, head);
      return;
    }
    const streamed = (method === 'POST' || method === 'PUT') && deps.streamedUpload?.(url) === true;
    let rawBody: Buffer;
    try {
      rawBody = streamed ? EMPTY : await readBody(req, maxRequestSize);
    } catch (err) {
      if (err instanceof RequestTooLarge) {
        send(res, { ...errorReply(413, [`request body too large: the limit is ${maxRequestSize} bytes`]), headers: { Connection: 'close' } }, head);
      } else if (!res.headersSent && !res.destroyed) {
        send(res, errorReply(400, ['failed to read the request body']), head);
      }
      return;
    }
    let requestId = '';
    let reply: ApiReply;
    try {
      const apiReq = parseApiRequest({ method, url, headers: req.headers, rawBody, remoteAddress: req.socket.remoteAddress }, parseOpts);
      // From here the request holds the body; this frame does not keep it alive (issue 31).
      rawBody = EMPTY;
      if (streamed) apiReq.bodyStream = req;
      requestId = apiReq.id;
      reply = await handle(apiReq);
    } catch (err) {
      reply = replyForError(err, logger, requestId);
    }
    if (reply.eventStream) {
      if (!res.destroyed) openStream(reply.eventStream, sseSink(res), req);
      return;
    }
    // What is left of an upload the handler refused would be taken for the next request.
    if (streamed && !req.complete) reply = { ...reply, headers: { ...reply.headers, Connection: 'close' } };
    send(res, cors ? { ...reply, headers: { ...reply.headers, ...cors.headers } } : reply, head, requestId);
  }

  function send(res: http.ServerResponse, reply: ApiReply, head: boolean, requestId = ''): void {
    if (res.destroyed || res.headersSent) return;
    if (isStreamBody(reply.body) && reply.status < 300) return sendStream(res, reply, reply.body, head);
    let rendered: ReturnType<typeof renderReply>;
    try {
      rendered = renderReply(reply, head);
    } catch (err) {
      rendered = renderReply(replyForError(err, logger, requestId), head);
    }
    writeRendered(res, rendered);
  }

  function sendStream(res: http.ServerResponse, reply: ApiReply, body: StreamBody, head: boolean): void {
    res.writeHead(reply.status, { 'Cache-Control': 'no-store', ...reply.headers, 'Content-Type': body.contentType });
    // The head leaves now, not with the first chunk: a client of sys/monitor knows the stream is open before any line.
    res.flushHeaders();
    if (head) {
      res.end();
      return;
    }
    pipeline(Readable.from(body.stream, { objectMode: false }), res).catch((err: unknown) => {
      logger.error('a streamed reply failed midway; the connection was cut', { error: err instanceof Error ? err.message : String(err) });
      res.destroy();
    });
  }

  const httpServer = http.createServer((req, res) => {
    if (req.url?.startsWith(API_PREFIX)) dispatch(req, res);
    else app(req, res);
  });

  /** Open event streams, ended when the listener closes (they never go idle by themselves). */
  const streams = new Set<() => void>();
  function openStream(stream: ReplyStream, sink: ReturnType<typeof sseSink>, req: http.IncomingMessage): void {
    const end = () => sink.end('the server is shutting down');
    streams.add(end);
    sink.onClose(() => streams.delete(end));
    const lastEventId = req.headers['last-event-id'];
    stream.open(sink, { lastEventId: typeof lastEventId === 'string' && lastEventId !== '' ? lastEventId : undefined });
  }

  // A WebSocket upgrade (the Vault CLI's `events subscribe`) goes through the same handler as a GET:
  // only a streamed reply completes the handshake; anything else is answered as plain HTTP and closed.
  const webSockets = new WebSocketServer({ noServer: true, maxPayload: 4096 });
  httpServer.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => undefined);
    if (!req.url?.startsWith(API_PREFIX) || String(req.headers.upgrade ?? '').toLowerCase() !== 'websocket') {
      socket.destroy();
      return;
    }
    void upgrade(req, socket, head);
  });
  async function upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    let requestId = '';
    let reply: ApiReply;
    try {
      const apiReq = parseApiRequest({ method: 'GET', url: req.url ?? '/', headers: req.headers, rawBody: EMPTY, remoteAddress: req.socket.remoteAddress }, parseOpts);
      requestId = apiReq.id;
      reply = await handle(apiReq);
    } catch (err) {
      reply = replyForError(err, logger, requestId);
    }
    const stream = reply.eventStream;
    if (!stream) {
      const r = reply.status === 200 ? errorReply(400, ['this path does not stream: no WebSocket here']) : reply;
      const body = r.body === undefined ? '' : JSON.stringify(r.body);
      socket.end(`HTTP/1.1 ${r.status} ${http.STATUS_CODES[r.status] ?? ''}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
      return;
    }
    webSockets.handleUpgrade(req, socket, head, (ws) => openStream(stream, webSocketSink(ws), req));
  }
  // Requests llhttp itself rejects (bad method, oversized head) still get an `{errors}` body.
  // err.rawPacket is never logged: it may hold a token.
  httpServer.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const [status, message] = CLIENT_ERRORS[err.code ?? ''] ?? [400, 'malformed HTTP request'];
    const body = JSON.stringify({ errors: [message] });
    // A reply to HEAD carries no body, or the client reads it as a broken next response. The head
    // reaches llhttp in one packet (list-method.ts holds it back until complete), so its start is here.
    const raw = (err as { rawPacket?: unknown }).rawPacket;
    const head = Buffer.isBuffer(raw) && raw.subarray(0, 5).toString('latin1') === 'HEAD ';
    socket.end(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\nContent-Type: application/json\r\nCache-Control: no-store\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${head ? '' : body}`,
      () => socket.destroy(),
    );
  });
  const sockets = new Set<net.Socket>();
  let server: net.Server | null = null;

  function accept(socket: net.Socket, encrypted: boolean): void {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    // Errors on an accepted socket (resets) end that connection only.
    socket.on('error', () => undefined);
    httpServer.emit('connection', wrapConnection(socket, { encrypted }));
  }

  return {
    async start() {
      if (server) throw new Error('listener already started');
      if (opts.tls) {
        const [cert, key] = await Promise.all([readFile(opts.tls.certFile), readFile(opts.tls.keyFile)]);
        const tlsServer = tls.createServer({ cert, key, minVersion: 'TLSv1.2', ALPNProtocols: ['http/1.1'] }, (s) => accept(s, true));
        // A failed handshake is the client's problem; keep it out of the error log.
        tlsServer.on('tlsClientError', () => undefined);
        server = tlsServer;
      } else {
        server = net.createServer({ noDelay: true }, (s) => accept(s, false));
      }
      const srv = server;
      await new Promise<void>((resolve, reject) => {
        srv.once('error', reject);
        srv.listen(port, host, () => {
          srv.off('error', reject);
          resolve();
        });
      });
      srv.on('error', (err) => logger.error('listener error', { address: opts.address, error: err.message }));
      const addr = srv.address() as AddressInfo;
      return { host: addr.address, port: addr.port };
    },

    async close() {
      const srv = server;
      if (!srv) return;
      server = null;
      const closed = new Promise<void>((resolve) => srv.close(() => resolve()));
      for (const end of [...streams]) end();
      httpServer.closeIdleConnections();
      const deadline = Date.now() + CLOSE_GRACE_MS;
      while (sockets.size > 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
        httpServer.closeIdleConnections();
      }
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

function isStreamBody(body: unknown): body is StreamBody {
  return typeof body === 'object' && body !== null && 'stream' in body && typeof (body as StreamBody).stream?.[Symbol.asyncIterator] === 'function';
}

/** Reads the whole body, at most `limit` bytes; no body (no length, no chunking) costs nothing. */
function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared === undefined && req.headers['transfer-encoding'] === undefined) return Promise.resolve(EMPTY);
  if (declared !== undefined && Number(declared) > limit) return Promise.reject(new RequestTooLarge());
  // A large declared length is read into one buffer grown as its bytes arrive (doubling, capped
  // at that length): the chunks are not all held until a concat copies them (two copies of a
  // large body at once; issue 31), and a client that declares a large body but sends little
  // makes the server allocate little. A small body comes in one chunk, kept as it is.
  const length = declared === undefined ? 0 : Number(declared);
  const preallocate = Number.isSafeInteger(length) && length > PREALLOCATE_ABOVE;
  let whole: Buffer | null = null;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        // Keep discarding what still arrives so the reply can be written.
        req.resume();
        reject(new RequestTooLarge());
        return;
      }
      if (preallocate) {
        // node:http never delivers more than the declared length, so `size` stays within it.
        if (!whole || size > whole.length) {
          const grown = Buffer.allocUnsafe(Math.min(length, Math.max(2 * size, FIRST_GROWN)));
          whole?.copy(grown, 0, 0, size - chunk.length);
          whole = grown;
        }
        chunk.copy(whole, size - chunk.length);
      } else chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      if (whole) resolve(size === whole.length ? whole : whole.subarray(0, size));
      else if (preallocate) resolve(EMPTY);
      else resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const onClose = () => {
      if (!req.complete) onError(new Error('request aborted'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

const EMPTY = Buffer.alloc(0);
/** A socket read is at most 64 KiB: a body up to that size usually arrives whole. */
const PREALLOCATE_ABOVE = 64 * 1024;
/** The first buffer of a large body; it doubles from there as bytes arrive. */
const FIRST_GROWN = 1024 * 1024;

function splitAddress(address: string): { host: string; port: number } {
  const i = address.lastIndexOf(':');
  let host = address.slice(0, i);
  const port = Number(address.slice(i + 1));
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid listener address ${address}: bad port`);
  return { host: host === '' ? '0.0.0.0' : host, port };
}

const stderrLogger: Pick<Logger, 'error' | 'warn'> = {
  error: (msg, meta) => process.stderr.write(`${JSON.stringify({ level: 'error', msg, ...meta })}\n`),
  warn: (msg, meta) => process.stderr.write(`${JSON.stringify({ level: 'warn', msg, ...meta })}\n`),
};
