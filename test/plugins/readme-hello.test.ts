/**
 * sdk-plugin/README.md's hello engine, followed as a newcomer would: the
 * engine file is taken from the README, written OUTSIDE the repository,
 * bundled into one .js file with the README's esbuild command, put in a dev
 * server's -dev-plugin-dir, registered by its sha256, mounted, written, read,
 * listed and asked for help. A README that stops working fails here.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startDevServer, type RunningServer } from '../helpers/server';

const ROOT = resolve(__dirname, '../..');
const README = readFileSync(join(ROOT, 'sdk-plugin/README.md'), 'utf8');

/** The first fenced block of `lang` after `heading`. */
function block(heading: string, lang: string): string {
  const from = README.indexOf(heading);
  expect(from).toBeGreaterThanOrEqual(0);
  const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(README.slice(from));
  if (!m) throw new Error(`no ${lang} block after ${heading}`);
  return m[1]!;
}

let dir: string;
let s: RunningServer | undefined;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sr-hello-'));
});
afterAll(async () => {
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

it('the hello engine of the README is at most 30 lines, builds outside the repository into one file, and serves as the README says', async () => {
  const engine = block('## Hello world', 'ts');
  expect(engine.trimEnd().split('\n').length).toBeLessThanOrEqual(30);
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src/hello.ts'), engine);

  // The README's build lines, run as written (esbuild from the repository's devDependencies; the packages as if installed).
  const sh = block('### Build, register, mount', 'sh').split('\n');
  const build = sh.find((l) => l.startsWith('npx esbuild '))!;
  const bin = join(ROOT, 'node_modules/.bin');
  const env = { ...process.env, PATH: `${bin}:${process.env.PATH}`, NODE_PATH: join(ROOT, 'node_modules') };
  execFileSync('sh', ['-c', build.replace(/^npx esbuild /, 'esbuild --log-level=warning ')], { cwd: dir, env, stdio: 'pipe' });
  const plugin = join(dir, 'plugins/hello.js');
  expect(statSync(plugin).isFile()).toBe(true);
  // One self-contained file (the plugin directory holds nothing else): no require of the SDK or its dependencies at run time.
  const bundled = readFileSync(plugin, 'utf8');
  expect(bundled).not.toMatch(/require\("(@strongroom|@grpc|zod|protobufjs)/);

  s = await startDevServer({ extraArgs: [`-dev-plugin-dir=${join(dir, 'plugins')}`] });
  const sha256 = createHash('sha256').update(readFileSync(plugin)).digest('hex');
  const reg = await s.api('PUT', 'sys/plugins/catalog/secret/hello', { sha256, command: 'hello.js', version: 'v0.1.0' });
  expect([reg.status, reg.text]).toEqual([204, '']);
  const mounted = await s.api('POST', 'sys/mounts/hello', { type: 'hello' });
  expect([mounted.status, mounted.text]).toEqual([204, '']);
  expect((await s.api('POST', 'hello/greetings/ana', { greeting: 'hi', shout: 'true' })).status).toBe(204);
  expect((await s.api('GET', 'hello/greetings/ana')).body.data).toEqual({ message: 'HI, ANA' });
  expect((await s.api('GET', 'hello/greetings/bob')).status).toBe(404);
  expect((await s.api('LIST', 'hello/greetings')).body.data).toEqual({ keys: ['ana'] });
  const help = await s.api('GET', 'hello/greetings/ana?help=1');
  expect(help.status).toBe(200);
  expect(help.body.help).toContain('Greet people by name.');

  // The sha256 covers the whole plugin: a copy with one more line is refused under the original's sha256.
  writeFileSync(join(dir, 'plugins/hello-changed.js'), `${bundled}\n// changed\n`);
  const refused = await s.api('PUT', 'sys/plugins/catalog/secret/hello-changed', { sha256, command: 'hello-changed.js', version: 'v0.1.0' });
  expect(refused.status).toBe(400);
  expect(refused.text).toMatch(/sha256/i);
});
