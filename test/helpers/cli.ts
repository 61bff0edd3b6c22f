/**
 * Runs the real `strongroom` command (core/bin/strongroom.js, what npm links)
 * as an operator would: own HOME (so the token file is the test's), the
 * server's address and token in the environment, optional stdin.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { scratchDir } from './server';

const CLI_BIN = resolve(__dirname, '../../core/bin/strongroom.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function cliRunner(base: { addr: string; token?: string; env?: Record<string, string> }) {
  const home = scratchDir('sr-cli-home-');
  return {
    home,
    run(args: string[], opts: { input?: string; token?: string | null; env?: Record<string, string> } = {}): Promise<CliResult> {
      const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: home, STRONGROOM_ADDR: base.addr, ...(base.env ?? {}), ...(opts.env ?? {}) };
      const token = opts.token === undefined ? base.token : opts.token;
      if (token) env.STRONGROOM_TOKEN = token;
      return new Promise((res) => {
        const child = execFile(process.execPath, [CLI_BIN, ...args], { env, timeout: 30_000 }, (err, stdout, stderr) => {
          const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : -1) : 0;
          res({ code, stdout, stderr });
        });
        child.stdin!.end(opts.input ?? '');
      });
    },
  };
}
