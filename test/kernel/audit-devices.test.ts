/**
 * The socket and syslog audit devices through the real binary, against
 * listeners this test owns (never the machine's syslog): entries arrive over
 * TCP, UDP and a unix socket; a socket device whose peer stops reading is
 * timed out on its own write_timeout while the request still succeeds through
 * the file device; and a file in a missing directory is refused with a 400.
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { scratchDir, startDevServer, type RunningServer } from '../helpers/server';

let s: RunningServer;
let dir: string;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  s = await startDevServer();
  dir = scratchDir('sr-audit-dev-');
});
afterAll(async () => {
  await s.stop();
  for (const c of closers) await c();
});

/** A stream server (TCP port or unix path) that collects what it receives; `stall` accepts and never reads. */
async function streamListener(at: number | string, opts: { stall?: boolean } = {}): Promise<{ server: Server; received: () => string; address: string }> {
  let data = '';
  const conns = new Set<Socket>();
  const server = createServer((c) => {
    conns.add(c);
    c.on('error', () => undefined);
    if (opts.stall) c.pause();
    else c.on('data', (d: Buffer) => (data += d.toString()));
  });
  await new Promise<void>((r) => (typeof at === 'string' ? server.listen(at, r) : server.listen(at, '127.0.0.1', r)));
  closers.push(async () => {
    for (const c of conns) c.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  });
  const address = typeof at === 'string' ? at : `127.0.0.1:${(server.address() as { port: number }).port}`;
  return { server, received: () => data, address };
}

async function udpListener(): Promise<{ sock: UdpSocket; messages: string[]; port: number }> {
  const sock = createSocket('udp4');
  const messages: string[] = [];
  sock.on('message', (m) => messages.push(m.toString()));
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  closers.push(async () => new Promise<void>((r) => sock.close(() => r())));
  return { sock, messages, port: sock.address().port };
}

async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const jsonLines = (text: string): any[] =>
  text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));

async function enable(path: string, type: string, options: Record<string, string>) {
  const r = await s.api('POST', `sys/audit/${path}`, { type, options });
  expect(r.status).toBe(204);
}
const disable = async (path: string) => expect((await s.api('DELETE', `sys/audit/${path}`)).status).toBe(204);

describe('socket audit device', () => {
  it('sends each entry as a JSON line to a TCP listener', async () => {
    const l = await streamListener(0);
    await enable('tcp', 'socket', { address: l.address, socket_type: 'tcp' });
    expect((await s.api('POST', 'secret/data/over-tcp', { data: { password: 'tcp-secret-value' } })).status).toBe(200);
    await until(() => jsonLines(l.received()).some((e) => e.type === 'response' && e.request.path === 'secret/data/over-tcp'), 'the TCP entries');
    const entries = jsonLines(l.received()).filter((e) => e.request.path === 'secret/data/over-tcp');
    expect(entries.map((e) => e.type)).toEqual(['request', 'response']);
    expect(entries[0].request.data.data.password).toBe((await s.api('POST', 'sys/audit-hash/tcp', { input: 'tcp-secret-value' })).body.data.hash);
    expect(l.received()).not.toContain('tcp-secret-value');
    // Vault's defaults are filled in and listed.
    expect((await s.api('GET', 'sys/audit')).body.data['tcp/'].options).toEqual({ address: l.address, socket_type: 'tcp', write_timeout: '2s' });
    await disable('tcp');
  });

  it('sends to a unix socket and to a UDP listener', async () => {
    const u = await streamListener(join(dir, 'audit.sock'));
    const udp = await udpListener();
    await enable('unix', 'socket', { address: u.address, socket_type: 'unix' });
    await enable('udp', 'socket', { address: `127.0.0.1:${udp.port}`, socket_type: 'udp' });
    expect((await s.api('GET', 'secret/data/over-tcp')).status).toBe(200);
    await until(() => jsonLines(u.received()).some((e) => e.type === 'response' && e.request.path === 'secret/data/over-tcp'), 'the unix entries');
    await until(() => udp.messages.some((m) => m.includes('"type":"response"') && m.includes('secret/data/over-tcp')), 'the UDP datagrams');
    expect(JSON.parse(udp.messages.find((m) => m.includes('"type":"request"'))!).request.operation).toBe('read');
    await disable('unix');
    await disable('udp');
  });

  it('times out a stalled device on its write_timeout while the request succeeds through the file device', async () => {
    const stalled = await streamListener(join(dir, 'stalled.sock'), { stall: true });
    const file = join(dir, 'audit.log');
    await enable('file', 'file', { file_path: file });
    await enable('stalled', 'socket', { address: stalled.address, socket_type: 'unix', write_timeout: '1500ms' });
    // An entry larger than the socket's kernel buffers (about 200 KiB for a unix stream): the write
    // cannot complete while the peer does not read. 40,000 keys make an entry of about 4 MB.
    const data: Record<string, string> = {};
    for (let i = 0; i < 40_000; i++) data[`k${i}`] = 'v';
    const started = Date.now();
    const r = await s.api('POST', 'secret/data/stalled-audit', { data });
    const took = Date.now() - started;
    expect(r.status).toBe(200);
    expect(took).toBeGreaterThanOrEqual(1400);
    expect(jsonLines(readFileSync(file, 'utf8')).filter((e) => e.request.path === 'secret/data/stalled-audit').map((e) => e.type)).toEqual(['request', 'response']);
    const timedOut = s
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
      .filter((l) => l.message === 'audit device failed' && l.path === 'stalled/');
    expect(timedOut.length).toBeGreaterThan(0);
    expect(timedOut[0].error).toMatch(/timed out after 1500 ms/);
    const metrics = (await s.api('GET', 'sys/metrics?format=prometheus')).text;
    expect(metrics).toMatch(/strongroom_audit_failures_total\{[^}]*device="stalled\/"[^}]*\} [1-9]/);
    await disable('stalled');
    await disable('file');
  });

  it('refuses bad options with a 400 naming the option', async () => {
    const noAddress = await s.api('POST', 'sys/audit/bad', { type: 'socket', options: {} });
    expect(noAddress.status).toBe(400);
    expect(noAddress.body.errors.join(' ')).toMatch(/options\.address/);
    const badType = await s.api('POST', 'sys/audit/bad', { type: 'socket', options: { address: '127.0.0.1:9', socket_type: 'sctp' } });
    expect(badType.status).toBe(400);
    expect(badType.body.errors.join(' ')).toMatch(/options\.socket_type/);
    const badTimeout = await s.api('POST', 'sys/audit/bad', { type: 'socket', options: { address: '127.0.0.1:9', write_timeout: 'soon' } });
    expect(badTimeout.status).toBe(400);
    expect(badTimeout.body.errors.join(' ')).toMatch(/options\.write_timeout/);
  });
});

describe('syslog audit device', () => {
  it('sends RFC 3164 messages with the facility and tag to a UDP address', async () => {
    const udp = await udpListener();
    await enable('syslog', 'syslog', { facility: 'LOCAL0', tag: 'sr-audit', address: `udp://127.0.0.1:${udp.port}` });
    expect((await s.api('POST', 'secret/data/over-syslog', { data: { v: 'syslog-secret' } })).status).toBe(200);
    await until(() => udp.messages.some((m) => m.includes('"type":"response"') && m.includes('secret/data/over-syslog')), 'the syslog datagrams');
    const msg = udp.messages.find((m) => m.includes('"type":"request"') && m.includes('secret/data/over-syslog'))!;
    // local0 (16) * 8 + info (6) = 134.
    expect(msg).toMatch(/^<134>\w{3} [ \d]\d \d\d:\d\d:\d\d \S+ sr-audit: \{/);
    expect(JSON.parse(msg.slice(msg.indexOf('{'))).request.operation).toBe('create');
    expect(udp.messages.join('')).not.toContain('syslog-secret');
    await disable('syslog');
  });

  it('sends to a unix socket address', async () => {
    const u = await streamListener(join(dir, 'syslog.sock'));
    await enable('syslog-unix', 'syslog', { address: u.address });
    expect((await s.api('GET', 'secret/data/over-syslog')).status).toBe(200);
    await until(() => u.received().includes('"type":"response"'), 'the syslog lines');
    // AUTH (4) * 8 + info (6) = 38; the tag defaults to strongroom.
    expect(u.received()).toMatch(/<38>.*strongroom: \{"time"/);
    await disable('syslog-unix');
  });

  it('refuses an unknown facility', async () => {
    const r = await s.api('POST', 'sys/audit/bad', { type: 'syslog', options: { facility: 'nope', address: 'udp://127.0.0.1:9' } });
    expect(r.status).toBe(400);
    expect(r.body.errors.join(' ')).toMatch(/options\.facility/);
  });
});

describe('file audit device', () => {
  it('answers a file in a missing directory with a 400 naming the path', async () => {
    const missing = join(dir, 'no-such-dir', 'audit.log');
    const r = await s.api('POST', 'sys/audit/missing', { type: 'file', options: { file_path: missing } });
    expect(r.status).toBe(400);
    expect(r.body.errors.join(' ')).toContain(missing);
    expect((await s.api('GET', 'sys/audit')).body.data['missing/']).toBeUndefined();
  });
});
