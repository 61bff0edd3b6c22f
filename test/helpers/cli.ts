/**
 * Runs the real `strongroom` command (core/bin/strongroom.js, what npm links)
 * as an operator would: own HOME (so the token file is the test's), the
 * server's address and token in the environment, optional stdin.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { scratchDir } from './server';

const CLI_BIN = resolve(__dirname, '../../core/bin/strongroom.js');
// The pseudo-terminal driver is Python's pty module: Debian's python3, installed by the project's script when missing.
const { ensurePython3 } = require('../../scripts/compat/python-hvac.js') as { ensurePython3(): { python?: string; reason?: string } };

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The result of a run that must succeed; anything else throws with its output. */
export function ok(r: CliResult): CliResult {
  if (r.code !== 0) throw new Error(`exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
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

/**
 * Runs the CLI on a real pseudo-terminal (Python's pty module): waits for
 * `prompt`, types `typed` and Enter (a carriage return, as a keyboard sends),
 * and returns everything the terminal showed. `timedOut` when the command did
 * not finish within 20 s of Enter (it was still waiting for more input).
 */
export function runInTerminal(args: string[], prompt: string, typed: string, env: Record<string, string>): Promise<{ screen: string; code: number | null; timedOut: boolean; prompted: boolean }> {
  const driver = `
import json, os, pty, select, signal, sys, time
prompt, typed, argv = sys.argv[1].encode(), sys.argv[2].encode(), sys.argv[3:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(argv[0], argv)
screen = b''
closed = False
def pump(until, timeout):
    global screen, closed
    end = time.time() + timeout
    while time.time() < end and not until():
        if closed:
            time.sleep(0.05)
        elif select.select([fd], [], [], 0.1)[0]:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                chunk = b''
            if chunk:
                screen += chunk
            else:
                closed = True
prompted = False
pump(lambda: prompt in screen, 30)
prompted = prompt in screen
os.write(fd, typed + b'\\r')
status = None
def done():
    global status
    if status is None:
        p, st = os.waitpid(pid, os.WNOHANG)
        if p:
            status = st
    return status is not None
pump(done, 20)
timed_out = not done()
if timed_out:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
else:
    pump(lambda: False, 0.5)
code = os.waitstatus_to_exitcode(status) if status is not None else None
print(json.dumps({'screen': screen.decode('utf8', 'replace'), 'code': code, 'timedOut': timed_out, 'prompted': prompted}))
`;
  const { python, reason } = ensurePython3();
  if (!python) return Promise.reject(new Error(`pty driver: ${reason}`));
  return new Promise((res, rej) => {
    execFile(python, ['-c', driver, prompt, typed, process.execPath, CLI_BIN, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 90_000 }, (err, stdout, stderr) => {
      if (err) return rej(new Error(`pty driver: ${err.message}\n${stderr}`));
      res(JSON.parse(stdout));
    });
  });
}
