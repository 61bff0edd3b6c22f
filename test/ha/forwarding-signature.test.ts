/**
 * Issue 26, finding 12, against two real nodes on the real (shared)
 * PostgreSQL: a request a standby forwards is signed over the whole request
 * (method, URL, client address, time, token and namespace headers, a hash of
 * the body) and carries a nonce. A forwarded request recorded on the wire
 * between the nodes can be replayed neither with another body (the client
 * address it vouches for would let a CIDR-bound token be used from anywhere)
 * nor as it is (it would run twice). And (finding 11) a standby's listener
 * that refuses unauthenticated generate-root refuses it before forwarding.
 */
import { randomBytes } from 'node:crypto';
import * as http from 'node:http';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { Client } from 'pg';
import { haPostgresConfig, postgresUrl } from '../helpers/databases';
import { descendantPids, waitFor } from '../helpers/processes';
import { freePort, startConfigServer, type RunningServer } from '../helpers/server';

jest.setTimeout(120_000);

const suffix = randomBytes(4).toString('hex');
const tables = { data: `sr_fwd_${suffix}`, lock: `sr_fwd_lock_${suffix}` };
const VICTIM_ADDRESS = '127.0.0.5';

const config = (apiAddr: string, extra = '') => haPostgresConfig({ tables, apiAddr, extra });

let active: RunningServer;
let standby: RunningServer & { port2: number };
let relay: Server;
const relayed = new Set<Socket>();
/** Every byte a standby sent to the active node through the relay. */
let wire = Buffer.alloc(0);

const health = async (n: RunningServer) => (await fetch(`${n.url}/v1/sys/health`).catch(() => null))?.status ?? 0;

beforeAll(async () => {
  // The active node advertises a relay in front of its listener: what the standby forwards is recorded there.
  const relayPort = await freePort();
  active = await startConfigServer(config(`http://127.0.0.1:${relayPort}`));
  relay = createServer((from) => {
    const to = connect(active.port, '127.0.0.1');
    for (const s of [from, to]) {
      relayed.add(s);
      s.on('error', () => undefined);
      s.on('close', () => relayed.delete(s));
    }
    from.on('data', (d: Buffer) => (wire = Buffer.concat([wire, d])));
    from.pipe(to).pipe(from);
  });
  await new Promise<void>((r) => relay.listen(relayPort, '127.0.0.1', r));

  await waitFor('the first node to reach PostgreSQL', async () => (await active.api('GET', 'sys/seal-status', undefined, { token: null })).status === 200);
  const init = await active.api('PUT', 'sys/init', { secret_shares: 1, secret_threshold: 1 }, { token: null });
  expect(init.status).toBe(200);
  active.rootToken = init.body.root_token;
  expect((await active.api('PUT', 'sys/unseal', { key: init.body.keys_base64[0] }, { token: null })).body.sealed).toBe(false);
  await waitFor('the first node to be active', async () => (await health(active)) === 200);
  // The standby has a second listener refusing the unauthenticated root recovery paths (finding 11),
  // and standby reads off (issue 30): it forwards every request, so each crosses the relay.
  standby = await startConfigServer(
    config('http://127.0.0.1:$PORT', 'disable_standby_reads = true\nlistener "tcp" {\n  address = "127.0.0.1:$PORT2"\n  tls_disable = true\n  disable_unauthed_generate_root_endpoints = true\n}'),
  );
  standby.rootToken = active.rootToken;
  await waitFor('the second node to reach PostgreSQL', async () => (await standby.api('GET', 'sys/seal-status', undefined, { token: null })).status === 200);
  expect((await standby.api('PUT', 'sys/unseal', { key: init.body.keys_base64[0] }, { token: null })).body.sealed).toBe(false);
  await waitFor('the second node to be a standby', async () => (await health(standby)) === 429);
  expect((await active.api('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } })).status).toBe(204);
});

afterAll(async () => {
  await Promise.all([active?.stop('SIGKILL'), standby?.stop('SIGKILL')]);
  for (const s of relayed) s.destroy();
  await new Promise((r) => (relay ? relay.close(r) : r(undefined)));
  const c = new Client({ connectionString: postgresUrl() });
  await c.connect();
  await c.query(`DROP TABLE IF EXISTS ${tables.data}, ${tables.lock}`);
  await c.end();
});

/** One request from a given local address, raw headers as given. */
function send(port: number, opts: { method: string; path: string; headers: Record<string, string>; body: string; from: string }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: opts.method, path: opts.path, localAddress: opts.from, headers: { ...opts.headers, 'content-length': Buffer.byteLength(opts.body) }, agent: false }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** The head of the first forwarded request for `path` seen on the wire, as name -> value. */
function recordedHead(path: string): { method: string; path: string; headers: Record<string, string> } {
  const text = wire.toString('latin1');
  for (const head of text.split('\r\n\r\n')) {
    const lines = head.split('\r\n').filter((l) => l !== '');
    const start = lines.findIndex((l) => / HTTP\/1\.1$/.test(l) && l.includes(` ${path} `));
    if (start === -1) continue;
    const [method] = lines[start]!.split(' ');
    const headers: Record<string, string> = {};
    for (const l of lines.slice(start + 1)) {
      const i = l.indexOf(':');
      headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
    }
    if (headers['x-strongroom-forwarded-for']) return { method: method!, path, headers };
  }
  throw new Error(`no forwarded request for ${path} on the wire`);
}

it('a forwarded request recorded between the nodes cannot be replayed with another body, nor as it was', async () => {
  const policy = await active.api('PUT', 'sys/policies/acl/writer', { policy: 'path "secret/data/*" { capabilities = ["create", "update", "read"] }' });
  expect(policy.status).toBe(204);
  expect((await active.api('POST', 'auth/token/roles/bound', { allowed_policies: 'writer', token_bound_cidrs: `${VICTIM_ADDRESS}/32` })).status).toBe(204);
  const created = await active.api('POST', 'auth/token/create/bound', { policies: ['writer'], ttl: '1h' });
  expect(created.status).toBe(200);
  const token = created.body.auth.client_token as string;

  // The victim, at its bound address, writes through the standby: forwarded, its address vouched for.
  const path = '/v1/secret/data/forwarded';
  const victim = await send(standby.port, { method: 'PUT', path, headers: { 'x-vault-token': token, 'content-type': 'application/json' }, body: JSON.stringify({ data: { v: 'victim' } }), from: VICTIM_ADDRESS });
  expect(victim.status).toBe(200);
  // The same token from anywhere else is refused: its CIDR binding holds.
  expect((await send(active.port, { method: 'PUT', path, headers: { 'x-vault-token': token }, body: JSON.stringify({ data: { v: 'direct' } }), from: '127.0.0.1' })).status).toBe(403);

  const recorded = recordedHead(path);
  const { host: _host, 'content-length': _length, connection: _connection, ...replayHeaders } = recorded.headers;
  expect(replayHeaders['x-vault-token']).toBe(token);

  // An attacker who recorded it sends it again within the minute, from its own address, with its own body.
  const tampered = await send(active.port, { method: recorded.method, path, headers: replayHeaders, body: JSON.stringify({ data: { v: 'evil' } }), from: '127.0.0.1' });
  expect(tampered.status).toBe(403);
  expect(tampered.body).toMatch(/forwarded request refused/);
  // And as it was: the nonce was spent by the first delivery.
  const replayed = await send(active.port, { method: recorded.method, path, headers: replayHeaders, body: JSON.stringify({ data: { v: 'victim' } }), from: '127.0.0.1' });
  expect(replayed.status).toBe(403);
  expect(replayed.body).toMatch(/forwarded request refused/);

  const stored = await active.api('GET', 'secret/metadata/forwarded');
  expect(stored.body.data.current_version).toBe(1);
  expect((await active.api('GET', 'secret/data/forwarded')).body.data.data).toEqual({ v: 'victim' });
});

it('a standby listener that refuses unauthenticated generate-root refuses it before forwarding (issue 26, finding 11)', async () => {
  const attempt = (port: number, method: string) => fetch(`http://127.0.0.1:${port}/v1/sys/generate-root/attempt`, { method, ...(method === 'PUT' ? { body: '{}' } : {}) });
  expect((await attempt(standby.port2, 'PUT')).status).toBe(405);
  expect((await active.api('GET', 'sys/generate-root/attempt', undefined, { token: null })).body.started).toBe(false);
  // The standby's other listener forwards it, and the active node's listener serves it.
  expect((await attempt(standby.port, 'PUT')).status).toBe(200);
  expect((await active.api('GET', 'sys/generate-root/attempt', undefined, { token: null })).body.started).toBe(true);
  expect((await attempt(standby.port2, 'DELETE')).status).toBe(405);
  expect((await attempt(standby.port, 'DELETE')).status).toBe(204);
});

it('with disable_standby_reads a standby forwards reads too and runs no plugin process of its own', async () => {
  const before = wire.length;
  const r = await standby.api('GET', 'secret/data/forwarded');
  expect([r.status, r.body.data.data]).toEqual([200, { v: 'victim' }]);
  expect(wire.subarray(before).toString('latin1')).toContain('GET /v1/secret/data/forwarded HTTP/1.1');
  expect(descendantPids(standby.proc.pid!, 'plugins/')).toEqual([]);
});
