/**
 * The README's "five-minute tour" as a newcomer runs it: `npm start` (its
 * first line, with the dev flags npm passes after `--`), then every other
 * line of the block by sh, as written. Only the listen address moves to a
 * free port (the README's 127.0.0.1:8200 is replaced in the flag and in its
 * commands). A README whose tour stops working, or an `npm start` whose
 * token the tour does not use, fails here.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { freePort, scratchDir } from '../helpers/server';

jest.setTimeout(240_000);

const ROOT = resolve(__dirname, '../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

function tour(): string {
  const from = README.indexOf('## A five-minute tour\n');
  expect(from).toBeGreaterThanOrEqual(0);
  const block = /```sh\n([\s\S]*?)```/.exec(README.slice(from));
  expect(block).not.toBeNull();
  return block![1]!;
}

let server: ChildProcess | undefined;

afterAll(async () => {
  if (!server || server.exitCode !== null || server.signalCode !== null) return;
  const exited = new Promise((r) => server!.once('exit', r));
  // npm, its sh and the server: one process group.
  process.kill(-server.pid!, 'SIGTERM');
  await exited;
});

it('the README tour works verbatim after npm start', async () => {
  const [start, ...rest] = tour().split('\n');
  expect(start).toMatch(/^npm start &/);
  const port = await freePort();
  const home = scratchDir('sr-tour-');
  const env = { PATH: process.env.PATH ?? '', HOME: home, TMPDIR: home };
  server = spawn('npm', ['start', '--', `-dev-listen-address=127.0.0.1:${port}`], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  server.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  server.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  for (const deadline = Date.now() + 60_000; !/Root Token: /.test(log); ) {
    if (server.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not start a server:\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(log).toMatch(/^Root Token: root$/m);

  const script = rest.join('\n');
  expect(script).toContain('127.0.0.1:8200');
  const out = await new Promise<string>((res, rej) =>
    execFile('sh', ['-ec', script.replaceAll('127.0.0.1:8200', `127.0.0.1:${port}`)], { cwd: ROOT, env, timeout: 180_000 }, (err, stdout, stderr) =>
      err ? rej(new Error(`${err.message}\n${stdout}\n${stderr}`)) : res(`${stdout}\n${stderr}`),
    ),
  );
  // curl -s exits 0 on any HTTP status: the answers must not be errors.
  expect(out).not.toMatch(/"errors"|permission denied|Error /i);
  expect(out).toContain('"password":"hunter2"');
  expect(out).toMatch(/^password\s+hunter2$/m);
  expect(out).toContain('"client_token"');
  expect(out).toMatch(/"ciphertext":"\w+:v1:/);
  expect(out).toMatch(/"password":"[a-z0-9]{16}"/);
});
