/**
 * Listener options through the real binary: a TLS listener whose certificate
 * (signed by a CA made in the test) a client verifies, the raw `LIST` verb
 * inside TLS, and `require_request_header` on a plain listener of the same
 * server.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { startConfigServer, type RunningServer } from '../helpers/server';
import { makeTestPki, type TestPki } from '../helpers/tls';
import { exchange } from '../helpers/wire';

const REQ = { 'X-Service-Request': 'true' };

let s: RunningServer & { configFile: string; port2: number };
let pki: TestPki;
let certDir: string;
let root = '';

beforeAll(async () => {
  pki = makeTestPki();
  certDir = mkdtempSync(join(tmpdir(), 'sr-tls-'));
  writeFileSync(join(certDir, 'tls.crt'), pki.certPem);
  writeFileSync(join(certDir, 'tls.key'), pki.keyPem, { mode: 0o600 });
  s = await startConfigServer(`storage "inmem" {}
listener "tcp" {
  address = "127.0.0.1:$PORT"
  tls_disable = true
  require_request_header = true
}
listener "tcp" {
  address = "127.0.0.1:$PORT2"
  tls_cert_file = "${join(certDir, 'tls.crt')}"
  tls_key_file = "${join(certDir, 'tls.key')}"
}
`);
  const init = await s.api('POST', 'sys/init', { secret_shares: 1, secret_threshold: 1 }, { token: null, headers: REQ });
  expect(init.status).toBe(200);
  root = init.body.root_token;
  expect((await s.api('POST', 'sys/unseal', { key: init.body.keys[0] }, { token: null, headers: REQ })).body.sealed).toBe(false);
  expect((await s.api('POST', 'sys/mounts/kv', { type: 'kv', options: { version: '1' } }, { token: root, headers: REQ })).status).toBe(204);
});
afterAll(async () => {
  await s.stop();
  rmSync(certDir, { recursive: true, force: true });
});

/** One request over TLS with Node's https client, verifying the server against `ca` (or the system store when omitted). */
function httpsCall(method: string, path: string, opts: { ca?: string; body?: unknown; servername?: string } = {}): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const req = https.request(
      { host: '127.0.0.1', port: s.port2, method, path: `/v1/${path}`, headers: { 'X-Service-Token': root }, agent: false, ...(opts.ca ? { ca: opts.ca } : {}), ...(opts.servername ? { servername: opts.servername } : {}) },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe('TLS listener', () => {
  it('serves a client that verifies the certificate against the CA, by IP and by name', async () => {
    const w = await httpsCall('POST', 'kv/tls', { ca: pki.caPem, body: { v: 'over-tls' } });
    expect(w.status).toBe(204);
    const r = await httpsCall('GET', 'kv/tls', { ca: pki.caPem });
    expect(r).toMatchObject({ status: 200, body: { data: { v: 'over-tls' } } });
    expect((await httpsCall('GET', 'sys/health', { ca: pki.caPem, servername: 'localhost' })).status).toBe(200);
  });

  it('is refused by a client that does not trust the CA', async () => {
    await expect(httpsCall('GET', 'sys/health')).rejects.toThrow(/self[- ]signed|unable to (get|verify)|certificate/i);
  });

  it('does not answer plain HTTP on the TLS port', async () => {
    // Whatever the server does with a plaintext request on a TLS port, it is not an API answer.
    const r = await fetch(`http://127.0.0.1:${s.port2}/v1/sys/health`).then((x) => x.status, () => 0);
    expect(r === 0 || r >= 400).toBe(true);
  });

  it('translates the raw LIST verb inside TLS: pipelined, keep-alive, bodies untouched', async () => {
    await httpsCall('POST', 'kv/dir/a', { ca: pki.caPem, body: { v: '1' } });
    const socket = tls.connect({ host: '127.0.0.1', port: s.port2, ca: pki.caPem, servername: 'localhost' });
    await new Promise<void>((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
    expect(socket.authorized).toBe(true);
    const auth = `X-Service-Token: ${root}\r\n`;
    const body = '{"v":"LIST /v1/kv/ HTTP/1.1"}';
    // Three requests in one write: LIST, a POST whose body looks like a LIST line, then LIST again.
    const replies = await exchange(
      socket,
      `LIST /v1/kv/dir/ HTTP/1.1\r\nHost: x\r\n${auth}\r\n` +
        `POST /v1/kv/dir/b HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}` +
        `LIST /v1/kv/dir HTTP/1.1\r\nHost: x\r\n${auth}\r\n`,
      3,
    );
    expect(replies.map((r) => r.status)).toEqual([200, 204, 200]);
    expect(JSON.parse(replies[0]!.body).data.keys).toEqual(['a']);
    expect(JSON.parse(replies[2]!.body).data.keys).toEqual(['a', 'b']);
    // The same connection still serves requests afterwards (keep-alive), and the body was stored as sent.
    const [after] = await exchange(socket, `GET /v1/kv/dir/b HTTP/1.1\r\nHost: x\r\n${auth}\r\n`, 1);
    expect(JSON.parse(after!.body).data).toEqual({ v: 'LIST /v1/kv/ HTTP/1.1' });
    socket.destroy();
  });
});

describe('require_request_header', () => {
  it('refuses a request without X-Service-Request with 412, on every path', async () => {
    for (const [path, token] of [['sys/health', null], ['kv/tls', root], ['sys/mounts', root]] as const) {
      const r = await s.api('GET', path, undefined, { token });
      expect(r.status).toBe(412);
      expect(r.body.errors.join(' ')).toMatch(/X-Service-Request/);
    }
    expect((await s.api('GET', 'kv/tls', undefined, { token: root, headers: { 'X-Service-Request': 'false' } })).status).toBe(412);
  });

  it('accepts X-Service-Request: true and its X-Vault-Request alias', async () => {
    const a = await s.api('GET', 'kv/tls', undefined, { token: root, headers: REQ });
    expect(a.body.data).toEqual({ v: 'over-tls' });
    const b = await s.api('GET', 'kv/tls', undefined, { token: root, headers: { 'X-Vault-Request': 'true' } });
    expect(b.body.data).toEqual({ v: 'over-tls' });
  });

  it('applies per listener: the TLS listener without the option does not ask for it', async () => {
    expect((await httpsCall('GET', 'kv/tls', { ca: pki.caPem })).status).toBe(200);
  });
});
