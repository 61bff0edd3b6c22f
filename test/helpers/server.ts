/**
 * Starts the real `strongroom` binary for end-to-end tests: a dev server on a
 * free loopback port with its own data directory, or a production server from
 * a config file (this checkout's binary, or `bin`: another install's). Every
 * process started here is killed when the test file ends, and the directories
 * made for it are removed: the server's TMPDIR points inside them, so its run
 * directory (plugin sockets) goes too, even after a SIGKILL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const BIN = resolve(__dirname, '../../core/dist/cli/main.js');

export const { freePort } = require(resolve(__dirname, '../../scripts/services/lib.js')) as { freePort(): Promise<number> };

export interface RunningServer {
  url: string;
  port: number;
  rootToken: string;
  unsealKey: string;
  dataDir: string;
  proc: ChildProcess;
  output: () => string;
  /** SIGKILL or SIGTERM the server and wait for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Calls the API; `token` defaults to the root token (null: none). */
  api(method: string, path: string, body?: unknown, opts?: { token?: string | null; headers?: Record<string, string> }): Promise<{ status: number; body: any; text: string; headers: Headers }>;
}

const running = new Set<ChildProcess>();
const scratch = new Set<string>();
afterAll(async () => {
  await Promise.all(
    [...running].map((p) => {
      const exited = new Promise<void>((r) => p.once('exit', () => r()));
      p.kill('SIGKILL');
      return exited;
    }),
  );
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

/** A fresh directory removed when the test file ends. */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  scratch.add(dir);
  return dir;
}

export async function startDevServer(opts: { dataDir?: string; rootTokenId?: string; extraArgs?: string[]; env?: Record<string, string> } = {}): Promise<RunningServer> {
  const port = await freePort();
  const scratchBase = scratchDir('sr-e2e-');
  const dataDir = opts.dataDir ?? scratchBase;
  const args = [BIN, 'server', '-dev', `-dev-listen-address=127.0.0.1:${port}`, `-dev-data-dir=${dataDir}`, `-dev-root-token-id=${opts.rootTokenId ?? 'root'}`, '-log-level=warn', ...(opts.extraArgs ?? [])];
  return launch(args, port, dataDir, { ...withTmp(scratchBase), ...opts.env }, true);
}

/**
 * A production server from `config`, where `$PORT` (the port `api()` and the
 * start-up check use, so it must be a plain-HTTP listener), `$PORT2` (a second
 * listener's port, returned as `port2`) and `$DIR` (a fresh directory) are
 * filled in.
 */
export async function startConfigServer(config: string, opts: { env?: Record<string, string>; bin?: string } = {}): Promise<RunningServer & { configFile: string; port2: number }> {
  const dir = scratchDir('sr-cfg-');
  const port = await freePort();
  let port2 = await freePort();
  while (port2 === port) port2 = await freePort();
  const file = join(dir, 'config.hcl');
  writeFileSync(file, config.replace(/\$PORT2/g, String(port2)).replace(/\$PORT/g, String(port)).replace(/\$DIR/g, dir));
  const s = await launch([opts.bin ?? BIN, 'server', `-config=${file}`, '-log-level=warn'], port, dir, { ...withTmp(dir), ...opts.env }, false);
  // The same object, not a copy: api() reads rootToken from it, so a caller may set it after init.
  return Object.assign(s, { configFile: file, port2 });
}

/** TMPDIR for a server (and its plugins) inside a directory this file removes. */
function withTmp(base: string): Record<string, string> {
  const tmp = join(base, 'tmp');
  mkdirSync(tmp, { recursive: true });
  return { TMPDIR: tmp };
}

async function launch(args: string[], port: number, dataDir: string, env: Record<string, string> | undefined, dev: boolean): Promise<RunningServer> {
  const proc = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(proc);
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  exited.then(() => running.delete(proc));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`server exited early (${proc.exitCode}):\n${out}`);
    if (Date.now() > deadline) throw new Error(`server did not start in time:\n${out}`);
    const ready = dev ? /Root Token: (\S+)/.test(out) : await fetch(`${url}/v1/sys/health`).then(() => true, () => false);
    if (ready) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const rootToken = /Root Token: (\S+)/.exec(out)?.[1] ?? '';
  const unsealKey = /Unseal Key: (\S+)/.exec(out)?.[1] ?? '';
  const server: RunningServer = {
    url,
    port,
    rootToken,
    unsealKey,
    dataDir,
    proc,
    output: () => out,
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      await exited;
    },
    async api(method, path, body, o = {}) {
      const token = o.token === undefined ? server.rootToken : o.token;
      const headers: Record<string, string> = { ...(o.headers ?? {}) };
      if (token) headers['X-Service-Token'] = token;
      const res = await fetch(`${url}/v1/${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
      const text = await res.text();
      let parsed: unknown = null;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        parsed = text;
      }
      return { status: res.status, body: parsed, text, headers: res.headers };
    },
  };
  return server;
}

/**
 * Starts the binary again on the config file (and so the port and data
 * directory) of a server that has exited, as a process restart would.
 */
export async function restartConfigServer(prev: RunningServer & { configFile: string }, opts: { env?: Record<string, string> } = {}): Promise<RunningServer & { configFile: string }> {
  if (prev.proc.exitCode === null && prev.proc.signalCode === null) throw new Error('restartConfigServer: the previous server is still running');
  const s = await launch([BIN, 'server', `-config=${prev.configFile}`, '-log-level=warn'], prev.port, prev.dataDir, { ...withTmp(prev.dataDir), ...opts.env }, false);
  return Object.assign(s, { configFile: prev.configFile });
}

/**
 * A production server on LevelDB storage at `<its directory>/data`,
 * initialized with one key share (`unsealKey`) and unsealed, its root token set.
 */
export async function startUnsealedLevelServer(): Promise<RunningServer & { configFile: string }> {
  const s = await startConfigServer('storage "level" { path = "$DIR/data" }\nlistener "tcp" { address = "127.0.0.1:$PORT" tls_disable = true }\n');
  const init = await s.api('POST', 'sys/init', { secret_shares: 1, secret_threshold: 1 }, { token: null });
  if (init.status !== 200) throw new Error(`init: ${init.status} ${init.text}`);
  s.unsealKey = init.body.keys[0];
  s.rootToken = init.body.root_token;
  return unsealed(s, s.unsealKey);
}

/**
 * Restarts a production server on its data (after it exited) and unseals it
 * with its one key; the root token carries over.
 */
export async function restartUnsealed(prev: RunningServer & { configFile: string }): Promise<RunningServer & { configFile: string }> {
  const s = await restartConfigServer(prev);
  s.rootToken = prev.rootToken;
  return unsealed(s, prev.unsealKey);
}

async function unsealed<S extends RunningServer>(s: S, key: string): Promise<S> {
  s.unsealKey = key;
  const r = await s.api('POST', 'sys/unseal', { key }, { token: null });
  if (r.body?.sealed !== false) throw new Error(`unseal: ${r.status} ${r.text}`);
  return s;
}

/** A token of a fresh ACL policy holding `policy` (HCL), created by the root token; `extra` goes to auth/token/create. */
export async function tokenWithPolicy(s: RunningServer, policy: string, extra: Record<string, unknown> = {}): Promise<string> {
  const name = `p${Math.random().toString(36).slice(2, 10)}`;
  const p = await s.api('PUT', `sys/policies/acl/${name}`, { policy });
  if (p.status !== 204) throw new Error(`writing policy ${name}: ${p.status} ${p.text}`);
  const r = await s.api('POST', 'auth/token/create', { policies: [name], ...extra });
  if (r.status !== 200) throw new Error(`creating a token: ${r.status} ${r.text}`);
  return r.body.auth.client_token as string;
}
