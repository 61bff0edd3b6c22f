/**
 * What the operator sees in the log around the server's life: a plugin that
 * fails to start is logged with its last stderr lines; SIGTERM to the whole
 * process group (systemd, Ctrl-C) gives an orderly shutdown, not "plugin
 * process exited unexpectedly"; on the next start the lease restore reports
 * what it loaded. The server is started here (not by the helper) in its own
 * process group, as a service manager would.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { leasePluginDir } from '../helpers/lease-plugin';
import { waitFor } from '../helpers/processes';
import { BIN, freePort } from '../helpers/server';

jest.setTimeout(180_000);

interface Proc {
  child: ChildProcess;
  out: () => string;
  exited: Promise<number | null>;
}

const started: ChildProcess[] = [];
afterAll(() => {
  for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

function launch(configFile: string, tmp: string): Proc {
  const child = spawn(process.execPath, [BIN, 'server', `-config=${configFile}`, '-log-level=info'], { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TMPDIR: tmp } });
  started.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return { child, out: () => out, exited: new Promise((r) => child.once('exit', (code) => r(code))) };
}

describe('server lifecycle logs', () => {
  it('plugin start-up failure with its stderr; orderly shutdown on SIGTERM to the process group; lease restore progress', async () => {
    const plugins = leasePluginDir();
    const dir = plugins.dir;
    // A JavaScript entry (plugins run in the node sandbox) that fails at start with something on stderr.
    const broken = join(dir, 'broken.js');
    writeFileSync(broken, 'process.stderr.write("loading the engine\\n");\nprocess.stderr.write("fatal: cannot find module engine-core\\n");\nprocess.exit(3);\n');
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const configFile = join(dir, 'server.hcl');
    writeFileSync(configFile, `storage "level" { path = "${dir}/data" }\nlistener "tcp" {\n  address = "127.0.0.1:${port}"\n  tls_disable = true\n}\nplugin_directory = "${dir}"\nlog_file = "${dir}/server.log"\n`);
    const api = async (method: string, path: string, body?: unknown, token?: string) => {
      const r = await fetch(`${url}/v1/${path}`, { method, headers: token ? { 'X-Service-Token': token } : {}, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
      const text = await r.text();
      return { status: r.status, body: text ? JSON.parse(text) : null };
    };

    let p = launch(configFile, dir);
    await waitFor('the server to listen', async () => (await fetch(`${url}/v1/sys/health`)).status > 0, 30_000);
    const init = await api('POST', 'sys/init', { secret_shares: 1, secret_threshold: 1 });
    const root = init.body.root_token as string;
    const key = init.body.keys_base64[0] as string;
    expect((await api('POST', 'sys/unseal', { key })).body.sealed).toBe(false);
    expect((await api('POST', 'sys/plugins/catalog/secret/lease-test', { command: plugins.command, sha256: plugins.sha256, version: 'v1.0.0' }, root)).status).toBe(204);
    expect((await api('POST', 'sys/mounts/lt', { type: 'lease-test' }, root)).status).toBe(204);
    expect((await api('POST', 'lt/roles/r', { ttl: '1h', max_ttl: '2h' }, root)).status).toBeLessThan(300);
    for (let i = 0; i < 3; i++) expect((await api('GET', 'lt/creds/r', undefined, root)).status).toBe(200);

    // A plugin that dies at start: the log says so with what it wrote to stderr.
    const sha = createHash('sha256').update(readFileSync(broken)).digest('hex');
    expect((await api('POST', 'sys/plugins/catalog/secret/broken', { command: 'broken.js', sha256: sha, version: 'v0.0.1' }, root)).status).toBe(204);
    const mount = await api('POST', 'sys/mounts/broken', { type: 'broken' }, root);
    expect(mount.status).toBeGreaterThanOrEqual(400);
    const failure = await waitFor('the start-up failure in the log', () =>
      p
        .out()
        .split('\n')
        .find((l) => l.includes('plugin failed to start')),
    );
    const entry = JSON.parse(failure) as { plugin: string; plugin_version: string; stderr: string[] };
    expect(entry).toMatchObject({ plugin: 'broken', plugin_version: 'v0.0.1' });
    expect(entry.stderr).toEqual(['loading the engine', 'fatal: cannot find module engine-core']);

    // SIGTERM to the server's process group, and to the plugin too as systemd's control group kill does.
    const pluginPid = (await api('GET', 'lt/pid', undefined, root)).body.data.pid as number;
    process.kill(-p.child.pid!, 'SIGTERM');
    try {
      process.kill(pluginPid, 'SIGTERM');
    } catch {
      // already gone: fine
    }
    expect(await p.exited).toBe(0);
    const out = p.out();
    expect(out).toContain('"message":"shutting down"');
    expect(out).toContain('"message":"shutdown complete"');
    expect(out).not.toContain('exited unexpectedly');
    expect(readFileSync(join(dir, 'server.log'), 'utf8')).toContain('shutdown complete');

    // Next start: the lease restore reports its progress and what it loaded.
    p = launch(configFile, dir);
    await waitFor('the server to listen again', async () => (await fetch(`${url}/v1/sys/health`).then((r) => r.status, () => 0)) > 0, 30_000);
    expect((await api('POST', 'sys/unseal', { key })).body.sealed).toBe(false);
    const restored = await waitFor('the restore summary', () =>
      p
        .out()
        .split('\n')
        .find((l) => l.includes('"message":"leases restored"')),
    );
    expect(p.out()).toContain('"message":"restoring leases"');
    expect(JSON.parse(restored)).toMatchObject({ loaded: 3, logger: 'expiration' });
    process.kill(-p.child.pid!, 'SIGINT');
    expect(await p.exited).toBe(0);
    expect(p.out()).not.toContain('exited unexpectedly');
  });
});
