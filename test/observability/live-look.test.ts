/**
 * A live look inside a real server, as Vault's operators have it:
 * sys/monitor streams log lines at the caller's level (debug lines from a
 * server logging at warn) in standard or json format; sys/host-info and
 * sys/in-flight-req answer Vault's shapes; all three need sudo. Through the
 * CLI: `strongroom monitor -log-level=debug` prints the lines as they come,
 * and `strongroom debug` writes one .tar.gz of polls and log lines. Sealing
 * logs a line a monitor sees.
 */
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { cliRunner } from '../helpers/cli';
import { openMonitor } from '../helpers/monitor';
import { scratchDir, startDevServer, tokenWithPolicy, type RunningServer } from '../helpers/server';

jest.setTimeout(240_000);

let s: RunningServer;

beforeAll(async () => {
  // -log-level=warn: the monitor's debug lines are not the server's own level.
  s = await startDevServer();
});

afterAll(async () => {
  await s.stop();
});

/** Opens a monitor, runs `action`, and returns the monitor's text once a line matches `until`. */
async function monitor(query: string, until: RegExp, action: () => Promise<unknown>): Promise<string> {
  const m = await openMonitor(s, query);
  try {
    await action();
    await m.waitFor(until);
    return m.text();
  } finally {
    m.stop();
  }
}

describe('sys/monitor', () => {
  it('streams debug lines from a server logging at warn, in standard format by default', async () => {
    const text = await monitor('log_level=debug', /secret\/data\/mon-std/, () => s.api('POST', 'secret/data/mon-std', { data: { a: '1' } }));
    expect(text).toMatch(/^\S+Z \[DEBUG\] request .*"path":"secret\/data\/mon-std"/m);
    // The secret's value is never in a log line.
    expect(text).not.toContain('"a":"1"');
    // The server's own output stays at warn.
    expect(s.output()).not.toContain('secret/data/mon-std');
  });

  it('log_format=json gives one JSON object a line; log_level=info leaves debug lines out', async () => {
    const text = await monitor('log_level=debug&log_format=json', /mon-json/, () => s.api('GET', 'secret/data/mon-json'));
    const line = text.split('\n').find((l) => l.includes('mon-json'))!;
    expect(JSON.parse(line)).toMatchObject({ level: 'debug', message: 'request', logger: 'request', path: 'secret/data/mon-json', status: 404 });
    // At info the request lines (debug) are not sent; sealing's line (info) is, and the stream outlives the seal.
    const sealed = await monitor('log_level=info', /\[INFO\] sealed/, () => s.api('POST', 'secret/data/mon-info', { data: { a: '1' } }).then(() => s.api('PUT', 'sys/seal')));
    expect(sealed).not.toContain('mon-info');
    const unsealed = await s.api('PUT', 'sys/unseal', { key: s.unsealKey }, { token: null });
    expect(unsealed.body.sealed).toBe(false);
  });

  it('refuses a bad level or format (400 naming the field) and a token without sudo (403)', async () => {
    const bad = await s.api('GET', 'sys/monitor?log_level=loud');
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('log_level');
    expect((await s.api('GET', 'sys/monitor?log_format=xml')).text).toContain('log_format');
    const noSudo = await tokenWithPolicy(s, 'path "sys/*" { capabilities = ["read"] }');
    for (const p of ['sys/monitor', 'sys/host-info', 'sys/in-flight-req']) expect([p, (await s.api('GET', p, undefined, { token: noSudo })).status]).toEqual([p, 403]);
    const sudo = await tokenWithPolicy(s, 'path "sys/*" { capabilities = ["read", "sudo"] }');
    expect((await s.api('GET', 'sys/host-info', undefined, { token: sudo })).status).toBe(200);
  });
});

describe('sys/host-info and sys/in-flight-req', () => {
  it('host-info answers Vault\'s shape from the real host', async () => {
    const r = await s.api('GET', 'sys/host-info');
    expect(r.status).toBe(200);
    const d = r.body.data;
    expect(Object.keys(d).sort()).toEqual(['cpu', 'cpu_times', 'disk', 'host', 'memory', 'timestamp']);
    expect(d.cpu.length).toBeGreaterThan(0);
    expect(d.cpu[0]).toEqual(expect.objectContaining({ cpu: 0, modelName: expect.any(String), mhz: expect.any(Number), flags: expect.any(Array) }));
    expect(d.cpu_times[0]).toEqual(expect.objectContaining({ cpu: 'cpu0', user: expect.any(Number), idle: expect.any(Number), iowait: expect.any(Number) }));
    expect(d.cpu_times[0].user + d.cpu_times[0].idle).toBeGreaterThan(0);
    expect(d.disk.map((x: { path: string }) => x.path)).toContain('/');
    expect(d.disk[0]).toEqual(expect.objectContaining({ total: expect.any(Number), free: expect.any(Number), usedPercent: expect.any(Number), inodesTotal: expect.any(Number) }));
    expect(d.host).toEqual(expect.objectContaining({ hostname: hostname(), os: 'linux', kernelVersion: expect.any(String), bootTime: expect.any(Number) }));
    expect(d.host.procs).toBeGreaterThan(0);
    expect(d.memory.total).toBeGreaterThan(0);
    expect(d.memory.available).toBeGreaterThan(0);
    expect(d.memory.used).toBe(d.memory.total - d.memory.available);
    expect(Math.abs(Date.parse(d.timestamp) - Date.now())).toBeLessThan(10 * 60_000);
  });

  it('in-flight-req lists the requests being served (itself among them) by request id', async () => {
    const r = await s.api('GET', 'sys/in-flight-req');
    expect(r.status).toBe(200);
    const entries = Object.entries(r.body as Record<string, Record<string, unknown>>);
    const self = entries.find(([, e]) => e.request_path === '/v1/sys/in-flight-req');
    expect(self).toBeDefined();
    expect(self![0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(self![1]).toEqual({ start_time: expect.any(String), client_remote_address: '127.0.0.1', request_path: '/v1/sys/in-flight-req', request_method: 'GET', client_id: '' });
    // Once answered, a request is gone.
    const again = await s.api('GET', 'sys/in-flight-req');
    expect(Object.keys(again.body)).not.toContain(self![0]);
  });
});

describe('the CLI', () => {
  it('strongroom monitor -log-level=debug prints the lines as they come', async () => {
    const home = scratchDir('sr-mon-');
    const child = spawn(process.execPath, [resolve(__dirname, '../../core/bin/strongroom.js'), 'monitor', '-log-level=debug'], {
      env: { PATH: process.env.PATH ?? '', HOME: home, STRONGROOM_ADDR: s.url, STRONGROOM_TOKEN: s.rootToken },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    try {
      for (const deadline = Date.now() + 60_000; !out.includes('cli-monitor'); ) {
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`monitor: ${out}`);
        await s.api('GET', 'secret/data/cli-monitor');
        await new Promise((r) => setTimeout(r, 500));
      }
    } finally {
      child.kill('SIGINT');
    }
    expect(out).toMatch(/\[DEBUG\] request .*secret\/data\/cli-monitor/);
    // Without sudo: the server's 403, exit 2.
    const cli = cliRunner({ addr: s.url, token: await tokenWithPolicy(s, 'path "sys/*" { capabilities = ["read"] }') });
    const denied = await cli.run(['monitor']);
    expect(denied.code).toBe(2);
    expect(denied.stderr).toContain('permission denied');
  });

  it('strongroom debug writes one .tar.gz of metrics, host info, in-flight requests, status and the log', async () => {
    const dir = scratchDir('sr-debug-');
    const cli = cliRunner({ addr: s.url, token: s.rootToken });
    // Requests during the capture, for its log.
    const during = setInterval(() => void s.api('GET', 'secret/data/during-debug').catch(() => undefined), 1000);
    let r;
    try {
      r = await cli.run(['debug', '-duration=6s', '-interval=5s', `-output=${join(dir, 'capture')}`]);
    } finally {
      clearInterval(during);
    }
    expect(r.code).toBe(0);
    const archive = join(dir, 'capture.tar.gz');
    expect(r.stdout).toContain(`Success! Debug archive written to: ${archive}`);
    expect(statSync(archive).mode & 0o777).toBe(0o600);
    execFileSync('tar', ['xzf', archive, '-C', dir]);
    const [root] = readdirSync(dir).filter((n) => n.startsWith('strongroom-debug-'));
    const read = (f: string) => readFileSync(join(dir, root!, f), 'utf8');
    const index = JSON.parse(read('index.json'));
    expect(index.targets).toEqual(['host', 'log', 'metrics', 'requests', 'server-status']);
    expect(index.errors).toEqual([]);
    expect(index.files).toEqual(['host_info.json', 'index.json', 'metrics.json', 'requests.json', 'server_status.json', 'strongroom.log']);
    // Two polls: at the start and at the end (6s at 5s intervals).
    const host = JSON.parse(read('host_info.json'));
    expect(host.length).toBe(2);
    expect(host[0].host.hostname).toBe(hostname());
    const metrics = JSON.parse(read('metrics.json'));
    expect(metrics.length).toBe(2);
    expect(JSON.stringify(metrics[0])).toContain('requests_total');
    const requests = JSON.parse(read('requests.json'));
    expect(Object.values(requests[0].in_flight_requests as Record<string, { request_path: string }>).map((e) => e.request_path)).toContain('/v1/sys/in-flight-req');
    const status = JSON.parse(read('server_status.json'));
    expect(status[0].health).toMatchObject({ initialized: true, sealed: false });
    expect(status[0].seal).toMatchObject({ sealed: false, type: 'shamir' });
    expect(read('strongroom.log')).toMatch(/\[DEBUG\] request .*secret\/data\/during-debug/);

    // -target narrows the capture; an unknown target is a usage error.
    const only = await cli.run(['debug', '-duration=5s', '-interval=5s', '-target=host,server-status', `-output=${join(dir, 'two.tar.gz')}`]);
    expect(only.code).toBe(0);
    expect(execFileSync('tar', ['tzf', join(dir, 'two.tar.gz')], { encoding: 'utf8' }).split('\n').filter((l) => /\.(json|log)$/.test(l)).map((l) => l.split('/')[1]).sort()).toEqual(['host_info.json', 'index.json', 'server_status.json']);
    const bad = await cli.run(['debug', '-target=pprof']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('-target: unknown pprof');
  });
});
