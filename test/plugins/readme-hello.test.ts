/**
 * sdk-plugin/README.md followed as a plugin author would, outside the
 * repository: a fresh directory under the system temp directory, a clean
 * environment (no NODE_PATH, none of this run's npm settings; PATH is node's
 * directory and the system's), and the README's blocks as written: its
 * files from its ts blocks, its shell blocks run by sh, one after another as
 * in a terminal (the variables they set are kept). Only the checkout's path
 * is put in for the README's placeholder, and the dev server is moved to a
 * free port. So the SDK is packed and installed from the tarball, the
 * in-process test runs under the runner the README names, the engine is
 * bundled from main.ts, registered, mounted, written, read, listed and
 * asked for help through the real strongroom CLI and binary, then changed,
 * rebuilt, re-registered and reloaded. A README that stops working fails here.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { freePort } from '../helpers/server';

const ROOT = resolve(__dirname, '../..');
const README = readFileSync(join(ROOT, 'sdk-plugin/README.md'), 'utf8');

/** The README's text from `heading` to the next heading. */
function section(heading: string): string {
  const from = README.indexOf(`${heading}\n`);
  expect(from).toBeGreaterThanOrEqual(0);
  const rest = README.slice(from + heading.length + 1);
  const next = rest.search(/^#{2,3} /m);
  return next < 0 ? rest : rest.slice(0, next);
}

/** The fenced blocks of `lang` in `text`, in order. */
function blocks(text: string, lang: string): string[] {
  return [...text.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);
}

/** The first block of `lang` after the README's text `marker`. */
function blockAfter(marker: string, lang: string): string {
  const from = README.indexOf(marker);
  expect(from).toBeGreaterThanOrEqual(0);
  return blocks(README.slice(from), lang)[0]!;
}

let dir: string;
let env: Record<string, string>;
let server: ChildProcess | undefined;
/** Assignments the README's blocks made, replayed before each later block as a terminal keeps them. */
const assignments: string[] = [];

/** Runs a README shell block in the author's directory; its stdout, or an error carrying both streams. */
function sh(script: string): string {
  try {
    const out = execFileSync('sh', ['-ec', [...assignments, script].join('\n')], { cwd: dir, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
    assignments.push(...script.split('\n').filter((l) => /^(export )?[A-Z_]+=/.test(l)));
    return out;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

beforeAll(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'sr-author-')));
  mkdirSync(join(dir, 'tmp'));
  env = {
    PATH: `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
    HOME: process.env.HOME ?? dir,
    LANG: 'C.UTF-8',
    // The dev server's data and plugin sockets, removed with the directory.
    TMPDIR: join(dir, 'tmp'),
    // npm's cache first: the same packages, fetched only when missing.
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  };
});

afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server!.once('exit', r));
    server.kill('SIGTERM');
    const timer = setTimeout(() => server!.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
  rmSync(dir, { recursive: true, force: true });
});

it('the README takes an author from an empty directory to a mounted, tested, rebuilt engine', async () => {
  expect(dir.startsWith(ROOT)).toBe(false);

  // Install: the SDK packed from this checkout, as a package of its own (no link into the checkout).
  const install = blocks(section('### Install the SDK and the CLI'), 'sh')[0]!;
  expect(install).toContain('/path/to/strongroom');
  sh(install.replace('/path/to/strongroom', ROOT));
  const sdk = join(dir, 'node_modules/@strongroom/sdk-plugin');
  expect(lstatSync(sdk).isSymbolicLink()).toBe(false);
  expect(readFileSync(join(sdk, 'package.json'), 'utf8')).toContain('"peerDependencies"');
  expect(lstatSync(join(dir, 'node_modules/zod')).isDirectory()).toBe(true);

  // The engine in two files, and its in-process test, under the runner the README names.
  const backend = blockAfter('`src/backend.ts`:', 'ts');
  expect(backend.trimEnd().split('\n').length).toBeLessThanOrEqual(30);
  expect(backend).not.toContain('require.main');
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src/backend.ts'), backend);
  writeFileSync(join(dir, 'src/main.ts'), blockAfter('`src/main.ts`', 'ts'));
  const testing = section('### Test in process');
  writeFileSync(join(dir, 'src/backend.test.ts'), blocks(testing, 'ts')[0]!);
  const runTests = /run with `([^`]+)`/.exec(testing)![1]!;
  const tap = sh(runTests);
  expect(tap).toMatch(/^# pass 1$/m);
  expect(tap).toMatch(/^# fail 0$/m);

  // One self-contained file: no require of the SDK or its dependencies at run time, nothing from the checkout, one zod.
  const [build, start, use] = blocks(section('### Build, register, mount'), 'sh') as [string, string, string];
  sh(build);
  const bundled = readFileSync(join(dir, 'plugins/hello.js'), 'utf8');
  expect(bundled).not.toMatch(/require\("(@strongroom|@grpc|zod|protobufjs)/);
  expect(bundled).not.toContain(ROOT);
  expect(bundled.match(/^\/\/ \S*zod\/v4\/core\/core\.c?js$/gm)).toHaveLength(1);

  // The dev server as the README starts it, on a free port.
  const port = await freePort();
  expect(start.trim().split('\n')).toHaveLength(1);
  server = spawn('sh', ['-ec', [...assignments, `exec ${start.trim()} -dev-listen-address=127.0.0.1:${port}`].join('\n')], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  server.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  server.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  for (const deadline = Date.now() + 30_000; !/Root Token: /.test(log); ) {
    if (server.exitCode !== null || Date.now() > deadline) throw new Error(`the dev server did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 50));
  }

  // Register, mount, write, read, list and help, through the CLI.
  expect(use).toContain('127.0.0.1:8200');
  const out = sh(use.replace('127.0.0.1:8200', `127.0.0.1:${port}`));
  expect(out).toContain('Success! Registered plugin: hello');
  expect(out).toMatch(/^message\s+HI, ANA$/m);
  expect(out).toMatch(/^Keys\n-+\nana$/m);
  expect(out).toContain('Greet people by name.');
  expect(out).toContain('    shout (bool)\n        Say it in capitals');
  expect(out).not.toMatch(/\(no description\)|boolean\|number\|string/);

  // An edit, rebuilt: refused until its sha256 is registered, served after the README's loop.
  const loop = blocks(section('### Change, rebuild, reload'), 'sh')[0]!;
  const greeting = '`${g.greeting}, ${data.name}`';
  expect(backend).toContain(greeting);
  writeFileSync(join(dir, 'src/backend.ts'), backend.replace(greeting, '`${g.greeting}, dear ${data.name}`'));
  sh(loop.split('\n')[0]!);
  expect(() => sh('strongroom plugin reload -plugin=hello')).toThrow(/sha256 mismatch/);
  sh(loop);
  expect(sh('strongroom read -field=message hello/greetings/ana').trim()).toBe('HI, DEAR ANA');
}, 240_000);
