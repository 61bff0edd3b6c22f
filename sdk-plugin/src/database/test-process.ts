/**
 * Starts a database plugin process the way the core's supervisor does (magic
 * cookie, protocol versions, a private 0700 socket directory, a fresh
 * per-process secret), reads its handshake line and hands back its address:
 * for plugin authors' tests that go through the real process and client.
 * Not used by the core.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import {
  APP_PROTOCOL_VERSION,
  ENV_MAGIC_COOKIE,
  ENV_PROTOCOL_VERSIONS,
  ENV_SECRET,
  ENV_SOCKET_DIR,
  MAGIC_COOKIE_VALUE,
  parseHandshakeLine,
} from '../transport/handshake.js';
import { closeDatabasePluginChannel } from './client.js';
import type { DatabasePluginAddress } from './types.js';

export interface DatabasePluginProcess {
  address: DatabasePluginAddress;
  child: ChildProcess;
  /** Everything the process wrote on stderr (its JSON log lines). */
  stderr(): string;
  /** Closes stdin (the process exits on its own), waits for the exit and removes the directory. */
  stop(): Promise<void>;
}

export async function startDatabasePluginProcess(opts: {
  command?: string;
  args: string[];
  env?: Record<string, string>;
  startTimeoutMs?: number;
}): Promise<DatabasePluginProcess> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sr-dbp-'));
  fs.chmodSync(dir, 0o700);
  const secret = randomBytes(32).toString('hex');
  const child = spawn(opts.command ?? process.execPath, opts.args, {
    env: {
      PATH: process.env.PATH ?? '',
      ...opts.env,
      [ENV_MAGIC_COOKIE]: MAGIC_COOKIE_VALUE,
      [ENV_PROTOCOL_VERSIONS]: String(APP_PROTOCOL_VERSION),
      [ENV_SOCKET_DIR]: dir,
      [ENV_SECRET]: secret,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin?.on('error', () => undefined);
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));

  const socketPath = await new Promise<string>((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout as NodeJS.ReadableStream });
    const timer = setTimeout(() => reject(new Error(`no handshake within ${opts.startTimeoutMs ?? 20_000} ms: ${err}`)), opts.startTimeoutMs ?? 20_000);
    lines.once('line', (line) => {
      clearTimeout(timer);
      try {
        resolve(parseHandshakeLine(line).address);
      } catch (e) {
        reject(e as Error);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`plugin exited (code ${code}) before its handshake: ${err}`));
    });
  });

  return {
    address: { socketPath, secret, version: 'v0.0.0-test', builtin: false },
    child,
    stderr: () => err,
    async stop() {
      closeDatabasePluginChannel(socketPath);
      child.stdin?.end();
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(killer);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
