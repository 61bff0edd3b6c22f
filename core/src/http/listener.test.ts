import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tls from 'node:tls';
import { badRequest } from '@strongroom/sdk-plugin/host';
import { createListener, type Listener, type ListenerOptions } from './listener.js';
import type { ApiHandler, ApiRequest } from './types.js';

/** Echoes what the HTTP layer parsed, plus a few paths that exercise reply handling. */
const echo: ApiHandler = async (req: ApiRequest) => {
  switch (req.urlPath) {
    case 'boom':
      throw new Error('db password hunter2 leaked in a driver message');
    case 'bad':
      throw badRequest('field "name" is required', ['name: required']);
    case 'nocontent':
      return { status: 204 };
    case 'raw':
      return { status: 200, body: { raw: 'ssh-ed25519 AAAA', contentType: 'text/plain' } };
    case 'cycle': {
      const a: Record<string, unknown> = {};
      a.self = a;
      return { status: 200, body: a };
    }
    default:
      return {
        status: 200,
        body: {
          id: req.id,
          method: req.method,
          operation: req.operation,
          head: req.head,
          help: req.help,
          path: req.path,
          urlPath: req.urlPath,
          namespace: req.namespace,
          token: req.token ?? null,
          data: req.data,
          raw: req.rawBody.toString('utf8'),
          remote: req.remoteAddress,
          marker: req.headers['x-strongroom-list-verb'] ?? null,
        },
      };
  }
};

interface Echo {
  id: string;
  method: string;
  operation: string;
  head: boolean;
  help: boolean;
  path: string;
  urlPath: string;
  namespace: string;
  token: string | null;
  data: Record<string, unknown>;
  raw: string;
  remote: string;
  marker: string | null;
}

interface WireResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Parses as many complete HTTP/1.1 responses as `buf` holds (every reply of ours has a Content-Length). */
function parseResponses(buf: Buffer): { responses: WireResponse[]; rest: Buffer } {
  const responses: WireResponse[] = [];
  let rest = buf;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end === -1) break;
    const lines = rest.toString('latin1', 0, end).split('\r\n');
    const status = Number((lines[0] ?? '').split(' ')[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const c = line.indexOf(':');
      headers[line.slice(0, c).toLowerCase()] = line.slice(c + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (rest.length < end + 4 + length) break;
    responses.push({ status, headers, body: rest.toString('utf8', end + 4, end + 4 + length) });
    rest = rest.subarray(end + 4 + length);
  }
  return { responses, rest };
}

/** A raw client connection: write exact bytes, await a number of responses. */
function rawClient(port: number, secure?: { ca: Buffer }) {
  const socket: net.Socket = secure
    ? tls.connect({ host: '127.0.0.1', port, ca: secure.ca, servername: 'localhost' })
    : net.connect({ host: '127.0.0.1', port });
  socket.setNoDelay(true);
  let buffered = Buffer.alloc(0);
  const got: WireResponse[] = [];
  let waiter: (() => void) | null = null;
  let closed = false;
  socket.on('data', (d: Buffer) => {
    const r = parseResponses(Buffer.concat([buffered, d]));
    buffered = r.rest;
    got.push(...r.responses);
    waiter?.();
  });
  socket.on('close', () => {
    closed = true;
    waiter?.();
  });
  socket.on('error', () => undefined);
  return {
    socket,
    write: (data: string | Buffer) => new Promise<void>((resolve) => socket.write(data, () => resolve())),
    async responses(n: number): Promise<WireResponse[]> {
      while (got.length < n && !closed) await new Promise<void>((r) => (waiter = r));
      waiter = null;
      return got.splice(0, n);
    },
    get closed() {
      return closed;
    },
    async waitClosed(): Promise<void> {
      while (!closed) await new Promise<void>((r) => (waiter = r));
    },
    end: () => socket.destroy(),
  };
}

function json<T = Echo>(r: WireResponse): T {
  return JSON.parse(r.body) as T;
}

async function withListener(options: Partial<ListenerOptions>, fn: (port: number, errors: unknown[]) => Promise<void>): Promise<void> {
  const errors: unknown[] = [];
  const listener: Listener = createListener({ address: '127.0.0.1:0', ...options }, echo, {
    logger: { error: (msg, meta) => errors.push({ msg, ...meta }), warn: () => undefined },
  });
  const { port } = await listener.start();
  try {
    await fn(port, errors);
  } finally {
    await listener.close();
  }
}

/** An HTTP request through Node's client (for everything except the LIST verb). */
function call(port: number, method: string, path: string, opts: { headers?: Record<string, string>; body?: string | Buffer } = {}) {
  return new Promise<WireResponse>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers: opts.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) headers[k] = String(v);
        resolve({ status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

describe('LIST verb on the wire', () => {
  it('answers a single LIST as a list operation', async () => {
    await withListener({}, async (port) => {
      const c = rawClient(port);
      await c.write('LIST /v1/secret/metadata/ HTTP/1.1\r\nHost: x\r\nX-Vault-Token: t1\r\n\r\n');
      const [r] = await c.responses(1);
      expect(r?.status).toBe(200);
      expect(json(r!)).toMatchObject({ method: 'LIST', operation: 'list', path: 'secret/metadata/', token: 't1', marker: null });
      c.end();
    });
  });

  it('keeps a LIST request body and the next request on the connection intact', async () => {
    await withListener({}, async (port) => {
      const c = rawClient(port);
      const body = '{"after":"b"}';
      await c.write(`LIST /v1/kv/?limit=2 HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body}GET /v1/kv/a HTTP/1.1\r\nHost: x\r\n\r\n`);
      const [a, b] = await c.responses(2);
      expect(json(a!)).toMatchObject({ operation: 'list', raw: body, data: { limit: '2' } });
      expect(json(b!)).toMatchObject({ method: 'GET', operation: 'read', path: 'kv/a' });
      c.end();
    });
  });

  it('handles pipelined GET + LIST + POST-with-body sent in one write', async () => {
    await withListener({}, async (port) => {
      const c = rawClient(port);
      const body = '{"note":"LIST /v1/evil HTTP/1.1\\r\\n"}';
      await c.write(
        'GET /v1/one HTTP/1.1\r\nHost: x\r\n\r\n' +
          'LIST /v1/two/ HTTP/1.1\r\nHost: x\r\n\r\n' +
          `POST /v1/three HTTP/1.1\r\nHost: x\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      const rs = await c.responses(3);
      expect(rs.map((r) => json(r).operation)).toEqual(['read', 'list', 'write']);
      expect(rs.map((r) => json(r).path)).toEqual(['one', 'two/', 'three']);
      expect(json(rs[2]!).data).toEqual({ note: 'LIST /v1/evil HTTP/1.1\r\n' });
      c.end();
    });
  });

  it('serves pipelined requests one after another: a read sees the write sent before it', async () => {
    const order: string[] = [];
    const slowWrite: ApiHandler = async (req) => {
      order.push(`start ${req.urlPath}`);
      if (req.operation === 'write') await new Promise((r) => setTimeout(r, 50));
      order.push(`end ${req.urlPath}`);
      return { status: 200, body: { path: req.urlPath } };
    };
    const listener = createListener({ address: '127.0.0.1:0' }, slowWrite);
    const { port } = await listener.start();
    try {
      const c = rawClient(port);
      await c.write('POST /v1/w HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}' + 'LIST /v1/r/ HTTP/1.1\r\nHost: x\r\n\r\n' + 'GET /v1/g HTTP/1.1\r\nHost: x\r\n\r\n');
      const rs = await c.responses(3);
      expect(rs.map((r) => json(r).path)).toEqual(['w', 'r/', 'g']);
      expect(order).toEqual(['start w', 'end w', 'start r/', 'end r/', 'start g', 'end g']);
      c.end();
    } finally {
      await listener.close();
    }
  });

  it('handles a LIST request line split byte by byte across writes', async () => {
    await withListener({}, async (port) => {
      const c = rawClient(port);
      const bytes = Buffer.from('LIST /v1/split/ HTTP/1.1\r\nHost: x\r\n\r\n');
      for (let i = 0; i < bytes.length; i++) {
        await c.write(bytes.subarray(i, i + 1));
        await new Promise((r) => setImmediate(r));
      }
      const [r] = await c.responses(1);
      expect(json(r!)).toMatchObject({ operation: 'list', path: 'split/' });
      c.end();
    });
  });

  it('serves 100 alternating requests on one keep-alive connection', async () => {
    await withListener({}, async (port) => {
      const c = rawClient(port);
      for (let i = 0; i < 100; i++) {
        const kind = i % 3;
        if (kind === 0) await c.write(`LIST /v1/p${i}/ HTTP/1.1\r\nHost: x\r\n\r\n`);
        else if (kind === 1) await c.write(`GET /v1/p${i} HTTP/1.1\r\nHost: x\r\n\r\n`);
        else {
          const body = `{"i":${i},"s":"LIST /x"}`;
          await c.write(`PUT /v1/p${i} HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
        }
        const [r] = await c.responses(1);
        const e = json(r!);
        expect(e.operation).toBe(['list', 'read', 'write'][kind]);
        expect(e.urlPath).toBe(kind === 0 ? `p${i}/` : `p${i}`);
        if (kind === 2) expect(e.data).toEqual({ i, s: 'LIST /x' });
      }
      expect(c.closed).toBe(false);
      c.end();
    });
  });

  it('leaves a chunked body containing "LIST /x" untouched', async () => {
    await withListener({}, async (port) => {
      const c = rawClient(port);
      const part1 = '{"a":"LIST /x HTTP/1.1\\r\\n';
      const part2 = '"}';
      await c.write(
        'POST /v1/chunky HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n' +
          `${Buffer.byteLength(part1).toString(16)}\r\n${part1}\r\n` +
          `${Buffer.byteLength(part2).toString(16)}\r\n${part2}\r\n0\r\n\r\n` +
          'LIST /v1/after/ HTTP/1.1\r\nHost: x\r\n\r\n',
      );
      const [a, b] = await c.responses(2);
      expect(json(a!)).toMatchObject({ operation: 'write', raw: part1 + part2, data: { a: 'LIST /x HTTP/1.1\r\n' } });
      expect(json(b!)).toMatchObject({ operation: 'list', path: 'after/' });
      c.end();
    });
  });

  it('ignores a client-forged list marker header', async () => {
    await withListener({}, async (port) => {
      const c = rawClient(port);
      await c.write('GET /v1/forged HTTP/1.1\r\nHost: x\r\nX-Strongroom-List-Verb: 1\r\n\r\n');
      const [r] = await c.responses(1);
      expect(json(r!)).toMatchObject({ method: 'GET', operation: 'read' });
      c.end();
    });
  });
});

describe('listener over TLS', () => {
  let dir: string;
  let certFile: string;
  let keyFile: string;
  let ca: Buffer;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'strongroom-tls-'));
    certFile = join(dir, 'cert.pem');
    keyFile = join(dir, 'key.pem');
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ], { stdio: 'ignore' });
    ca = readFileSync(certFile);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('translates LIST inside TLS (pipelined, with a verified certificate)', async () => {
    await withListener({ tls: { certFile, keyFile } }, async (port) => {
      const c = rawClient(port, { ca });
      const body = '{"x":"LIST /y"}';
      await c.write(
        'LIST /v1/secure/ HTTP/1.1\r\nHost: x\r\n\r\n' +
          `POST /v1/secure/w HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      );
      const [a, b] = await c.responses(2);
      expect(json(a!)).toMatchObject({ operation: 'list', path: 'secure/' });
      expect(json(b!)).toMatchObject({ operation: 'write', data: { x: 'LIST /y' } });
      expect((c.socket as tls.TLSSocket).authorized).toBe(true);
      c.end();
    });
  });

  it('serves https clients that verify the certificate through `ca`', async () => {
    await withListener({ tls: { certFile, keyFile } }, async (port) => {
      const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = https.request({ host: '127.0.0.1', port, path: '/v1/sys/x?list=true', method: 'GET', ca, servername: 'localhost', agent: false }, (r) => {
          let body = '';
          r.on('data', (d: Buffer) => (body += d.toString()));
          r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
      });
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toMatchObject({ operation: 'list', path: 'sys/x' });
    });
  });

  it('is refused by a client that does not trust the certificate', async () => {
    await withListener({ tls: { certFile, keyFile } }, async (port) => {
      await expect(
        new Promise((resolve, reject) => {
          const s = tls.connect({ host: '127.0.0.1', port, servername: 'localhost' }, () => resolve(s));
          s.on('error', reject);
        }),
      ).rejects.toThrow(/self[- ]signed/i);
    });
  });
});

describe('listener', () => {
  it('answers 404 JSON outside /v1/', async () => {
    await withListener({}, async (port) => {
      for (const path of ['/', '/v1', '/v2/secret', '/ui/']) {
        const r = await call(port, 'GET', path);
        expect(r.status).toBe(404);
        expect(r.headers['content-type']).toBe('application/json');
        expect(JSON.parse(r.body)).toEqual({ errors: ['not found'] });
      }
    });
  });

  it('reads a large declared body sent in pieces exactly, as its buffer grows past its first size', async () => {
    await withListener({ maxRequestSize: 8 * 1024 * 1024 }, async (port) => {
      // About 3 MB of varied text: more than the first buffer, written in uneven pieces.
      const value = Array.from({ length: 60_000 }, (_, i) => `${i.toString(36)}-é-`).join('').repeat(3);
      const body = Buffer.from(JSON.stringify({ value }));
      const c = rawClient(port);
      await c.write(`POST /v1/big HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
      for (let at = 0; at < body.length; at += 700_001) await c.write(body.subarray(at, at + 700_001));
      const [r] = await c.responses(1);
      expect(r?.status).toBe(200);
      const echoed = JSON.parse(r!.body) as Echo;
      expect(echoed.data).toEqual({ value });
      expect(Buffer.from((echoed as unknown as { raw: string }).raw).equals(body)).toBe(true);
    });
  });

  it('answers 413 to a declared oversize body and closes the connection', async () => {
    await withListener({ maxRequestSize: 1024 }, async (port) => {
      const c = rawClient(port);
      await c.write('POST /v1/big HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n' + 'a'.repeat(100));
      const [r] = await c.responses(1);
      expect(r?.status).toBe(413);
      expect(r?.headers.connection).toBe('close');
      expect(JSON.parse(r!.body).errors[0]).toMatch(/request body too large: the limit is 1024 bytes/);
      await c.waitClosed();
    });
  });

  it('answers 413 to a streamed (chunked) body that passes the limit', async () => {
    await withListener({ maxRequestSize: 1024 }, async (port) => {
      const c = rawClient(port);
      await c.write('POST /v1/big HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n');
      const piece = 'b'.repeat(600);
      await c.write(`258\r\n${piece}\r\n`);
      await c.write(`258\r\n${piece}\r\n`);
      const [r] = await c.responses(1);
      expect(r?.status).toBe(413);
      await c.waitClosed();
    });
  });

  it('accepts a body exactly at the limit', async () => {
    await withListener({ maxRequestSize: 64 }, async (port) => {
      const body = JSON.stringify({ v: 'x'.repeat(56) });
      expect(body.length).toBe(64);
      const r = await call(port, 'POST', '/v1/ok', { body });
      expect(r.status).toBe(200);
    });
  });

  it('requires X-Service-Request or X-Vault-Request when configured', async () => {
    await withListener({ requireRequestHeader: true }, async (port) => {
      const missing = await call(port, 'GET', '/v1/sys/health');
      expect(missing.status).toBe(412);
      expect(JSON.parse(missing.body).errors[0]).toMatch(/X-Service-Request/);
      expect((await call(port, 'GET', '/v1/a', { headers: { 'X-Service-Request': 'true' } })).status).toBe(200);
      expect((await call(port, 'GET', '/v1/a', { headers: { 'X-Vault-Request': 'true' } })).status).toBe(200);
      expect((await call(port, 'GET', '/v1/a', { headers: { 'X-Vault-Request': 'false' } })).status).toBe(412);
    });
    await withListener({}, async (port) => {
      expect((await call(port, 'GET', '/v1/a')).status).toBe(200);
    });
  });

  it('takes the token from X-Service-Token, X-Vault-Token or Authorization: Bearer', async () => {
    await withListener({}, async (port) => {
      const token = async (headers: Record<string, string>) => json((await call(port, 'GET', '/v1/a', { headers }))).token;
      expect(await token({ 'X-Service-Token': 's.one' })).toBe('s.one');
      expect(await token({ 'X-Vault-Token': 'hvs.two' })).toBe('hvs.two');
      expect(await token({ Authorization: 'Bearer hvs.three' })).toBe('hvs.three');
      expect(await token({ Authorization: 'Basic dXNlcjpwYXNz' })).toBeNull();
      expect(await token({ 'X-Service-Token': 'first', 'X-Vault-Token': 'second', Authorization: 'Bearer third' })).toBe('first');
      expect(await token({})).toBeNull();
    });
  });

  it('joins the namespace header with the path', async () => {
    await withListener({}, async (port) => {
      const get = async (path: string, headers: Record<string, string> = {}) => json(await call(port, 'GET', path, { headers }));
      expect(await get('/v1/ns2/secret/foo', { 'X-Vault-Namespace': 'ns1/' })).toMatchObject({ path: 'ns1/ns2/secret/foo', urlPath: 'ns2/secret/foo' });
      expect(await get('/v1/secret/foo', { 'X-Service-Namespace': 'ns1/ns2/' })).toMatchObject({ path: 'ns1/ns2/secret/foo' });
      expect(await get('/v1/ns1/ns2/secret/foo')).toMatchObject({ path: 'ns1/ns2/secret/foo', urlPath: 'ns1/ns2/secret/foo' });
      expect(await get('/v1//secret//foo/', { 'X-Service-Namespace': '/ns1//ns2' })).toMatchObject({ path: 'ns1/ns2/secret/foo/', urlPath: 'secret/foo/' });
      expect(await get('/v1/secret/foo', { 'X-Vault-Namespace': 'root' })).toMatchObject({ path: 'secret/foo', urlPath: 'secret/foo' });
    });
  });

  it('rejects dot segments and NUL bytes, even percent-encoded', async () => {
    await withListener({}, async (port) => {
      for (const path of ['/v1/secret/../sys/seal', '/v1/secret/%2e%2e/sys', '/v1/a/./b', '/v1/a%00b', '/v1/%zz']) {
        const r = await call(port, 'GET', path);
        expect([path, r.status]).toEqual([path, 400]);
        expect(JSON.parse(r.body).errors[0]).toMatch(/invalid path/);
      }
      const ns = await call(port, 'GET', '/v1/secret/a', { headers: { 'X-Vault-Namespace': 'ns1/../x' } });
      expect(ns.status).toBe(400);
      expect(JSON.parse(ns.body).errors[0]).toMatch(/invalid namespace/);
    });
  });

  it('decodes percent-encoded paths', async () => {
    await withListener({}, async (port) => {
      expect(json(await call(port, 'GET', '/v1/secret/data/a%20b%2Bc')).path).toBe('secret/data/a b+c');
    });
  });

  it('maps verbs and query flags to operations', async () => {
    await withListener({}, async (port) => {
      const op = async (method: string, path: string, body?: string) => json(await call(port, method, path, body === undefined ? {} : { body }));
      expect(await op('GET', '/v1/a?list=true&after=x')).toMatchObject({ operation: 'list', data: { after: 'x' } });
      expect(await op('GET', '/v1/a?list=1')).toMatchObject({ operation: 'list' });
      expect(await op('GET', '/v1/a?list=false&x=1&x=2')).toMatchObject({ operation: 'read', data: { x: ['1', '2'] } });
      expect(await op('GET', '/v1/a?help=1')).toMatchObject({ operation: 'read', help: true, data: {} });
      expect(await op('POST', '/v1/a', '{"k":1}')).toMatchObject({ operation: 'write', method: 'POST', data: { k: 1 } });
      expect(await op('PUT', '/v1/a', '')).toMatchObject({ operation: 'write', data: {} });
      expect(await op('DELETE', '/v1/a?version=2')).toMatchObject({ operation: 'delete', data: { version: '2' } });
      expect(await op('POST', '/v1/a?ignored=1', 'null')).toMatchObject({ operation: 'write', data: {} });
      const bad = await call(port, 'GET', '/v1/a?list=maybe');
      expect(bad.status).toBe(400);
      expect(JSON.parse(bad.body).errors[0]).toMatch(/'list'/);
    });
  });

  it('accepts PATCH with merge-patch JSON and refuses other content types', async () => {
    await withListener({}, async (port) => {
      const ok = await call(port, 'PATCH', '/v1/kv/data/a', { body: '{"data":{"a":null}}', headers: { 'Content-Type': 'application/merge-patch+json' } });
      expect(json(ok)).toMatchObject({ operation: 'patch', data: { data: { a: null } } });
      const wrong = await call(port, 'PATCH', '/v1/kv/data/a', { body: 'a=1', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
      expect(wrong.status).toBe(415);
    });
  });

  it('answers 400 naming the problem for malformed or non-object JSON', async () => {
    await withListener({}, async (port) => {
      const bad = await call(port, 'POST', '/v1/a', { body: '{"a":' });
      expect(bad.status).toBe(400);
      expect(JSON.parse(bad.body).errors[0]).toMatch(/^failed to parse JSON input: /);
      const arr = await call(port, 'POST', '/v1/a', { body: '[1,2]' });
      expect(arr.status).toBe(400);
      expect(JSON.parse(arr.body).errors[0]).toMatch(/must be a JSON object/);
    });
  });

  it('drops __proto__ keys from bodies and queries', async () => {
    await withListener({}, async (port) => {
      const body = '{"a":1,"__proto__":{"polluted":true},"n":{"\\u005f_proto__":{"x":1},"ok":2}}';
      const e = json(await call(port, 'POST', '/v1/a', { body }));
      expect(e.data).toEqual({ a: 1, n: { ok: 2 } });
      expect(e.raw).toBe(body);
      const q = json(await call(port, 'GET', '/v1/a?__proto__=x&b=1'));
      expect(q.data).toEqual({ b: '1' });
    });
  });

  it('sends HEAD replies without a body', async () => {
    await withListener({}, async (port) => {
      const c = rawClient(port);
      await c.write('HEAD /v1/a HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/b HTTP/1.1\r\nHost: x\r\n\r\n');
      // Our parser reads Content-Length bodies; a HEAD reply has none, so read it by hand.
      const data = await new Promise<string>((resolve) => {
        let all = '';
        c.socket.removeAllListeners('data');
        c.socket.on('data', (d: Buffer) => {
          all += d.toString('latin1');
          if (all.includes('"urlPath":"b"')) resolve(all);
        });
      });
      const [headPart, getPart] = data.split(/(?=HTTP\/1\.1 )/);
      expect(headPart).toMatch(/^HTTP\/1\.1 200/);
      expect(headPart).toMatch(/\r\n\r\n$/);
      expect(getPart).toMatch(/^HTTP\/1\.1 200/);
      c.end();
    });
  });

  it('writes JSON with no-store caching, 204 without a body, raw bodies with their type', async () => {
    await withListener({}, async (port) => {
      const r = await call(port, 'GET', '/v1/a');
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['cache-control']).toBe('no-store');
      expect(r.headers.etag).toBeUndefined();
      expect(r.headers['x-powered-by']).toBeUndefined();
      const nc = await call(port, 'POST', '/v1/nocontent');
      expect(nc.status).toBe(204);
      expect(nc.body).toBe('');
      const raw = await call(port, 'GET', '/v1/raw');
      expect(raw.headers['content-type']).toBe('text/plain');
      expect(raw.body).toBe('ssh-ed25519 AAAA');
    });
  });

  it('maps errors: typed errors keep their text, others become a generic 500 logged with the request id', async () => {
    await withListener({}, async (port, errors) => {
      const bad = await call(port, 'POST', '/v1/bad');
      expect(bad.status).toBe(400);
      expect(JSON.parse(bad.body)).toEqual({ errors: ['field "name" is required', 'name: required'] });
      const boom = await call(port, 'GET', '/v1/boom');
      expect(boom.status).toBe(500);
      expect(JSON.parse(boom.body)).toEqual({ errors: ['internal error'] });
      expect(boom.body).not.toContain('hunter2');
      expect(JSON.stringify(errors)).toContain('hunter2');
      expect(errors[0]).toMatchObject({ requestId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
      const cycle = await call(port, 'GET', '/v1/cycle');
      expect(cycle.status).toBe(500);
    });
  });

  it('reports the caller address and a fresh request id per request', async () => {
    await withListener({}, async (port) => {
      const a = json(await call(port, 'GET', '/v1/a'));
      const b = json(await call(port, 'GET', '/v1/a'));
      expect(a.remote).toBe('127.0.0.1');
      expect(a.id).not.toBe(b.id);
    });
  });

  it('answers what the HTTP parser rejects with a JSON error and closes the connection', async () => {
    await withListener({}, async (port) => {
      const method = rawClient(port);
      await method.write('BREW /v1/pot HTTP/1.1\r\nHost: x\r\n\r\n');
      const [m] = await method.responses(1);
      expect(m?.status).toBe(405);
      expect(JSON.parse(m!.body)).toEqual({ errors: ['unsupported HTTP method'] });
      await method.waitClosed();
      const big = rawClient(port);
      await big.write(`GET /v1/a HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
      const [b] = await big.responses(1);
      expect(b?.status).toBe(431);
      await big.waitClosed();
      const garbage = rawClient(port);
      await garbage.write('GET /v1/a HTTP/1.1\r\nNo colon here\r\n\r\n');
      const [g] = await garbage.responses(1);
      expect(g?.status).toBe(400);
      await garbage.waitClosed();
      // HEAD: the same status and headers, no body after them.
      const wire = await new Promise<string>((resolve) => {
        let out = '';
        const head = net.connect({ host: '127.0.0.1', port }, () => head.write(Buffer.from('HEAD /v1/caf\xe9 HTTP/1.1\r\nHost: x\r\n\r\n', 'latin1')));
        head.on('data', (d: Buffer) => (out += d.toString('latin1')));
        head.on('close', () => resolve(out));
      });
      expect(wire).toMatch(/^HTTP\/1\.1 400 /);
      expect(wire.endsWith('\r\n\r\n')).toBe(true);
    });
  });

  it('rejects bad options and reports the bound port', async () => {
    expect(() => createListener({ address: 'nope' }, echo)).toThrow(/address/);
    const l = createListener({ address: '127.0.0.1:0' }, echo);
    const { host, port } = await l.start();
    expect(host).toBe('127.0.0.1');
    expect(port).toBeGreaterThan(0);
    await l.close();
    await expect(call(port, 'GET', '/v1/a')).rejects.toThrow(/ECONNREFUSED/);
  });
});
