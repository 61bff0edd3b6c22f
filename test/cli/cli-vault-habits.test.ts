/**
 * The CLI with an operator's Vault habits (issue 28, point 6), through the
 * real binary against a real dev server: `print token`, `-output-curl-string`
 * (printed, not sent, and the printed command does what the verb would),
 * `-non-interactive` on a real terminal, `read sys/health` as a table,
 * `login -no-store` saying it did not store, a bad token on `kv get`
 * answered as permission denied, and `kv enable-versioning` turning a real
 * kv plugin's version 1 data into version 2 secrets.
 */
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { cliRunner, ok, runInTerminal } from '../helpers/cli';
import { scratchDir, startDevServer, type RunningServer } from '../helpers/server';
import { COMMANDS } from '../../core/src/cli/commands';

jest.setTimeout(300_000);

let s: RunningServer;
let cli: ReturnType<typeof cliRunner>;

beforeAll(async () => {
  s = await startDevServer();
  cli = cliRunner({ addr: s.url, token: s.rootToken });
});

afterAll(async () => {
  await s.stop();
});

it('print token prints the token the CLI would send: the environment, else the token file, else nothing', async () => {
  expect(ok(await cli.run(['print', 'token'])).stdout).toBe(`${s.rootToken}\n`);
  const fresh = cliRunner({ addr: s.url });
  expect(ok(await fresh.run(['print', 'token'])).stdout).toBe('');
  ok(await fresh.run(['login', s.rootToken]));
  expect(ok(await fresh.run(['print', 'token'])).stdout).toBe(`${s.rootToken}\n`);
});

it('-output-curl-string prints the request instead of sending it, and the printed command does what the verb would', async () => {
  const r = ok(await cli.run(['write', 'secret/data/curl-me', '-output-curl-string', '-'], { input: '{"data":{"a":"it\'s"}}' }));
  const curl = r.stdout.trim();
  expect(curl).toBe(`curl -X POST -H 'X-Service-Request: true' -H "X-Service-Token: $(strongroom print token)" -H 'Content-Type: application/json' -d '{"data":{"a":"it'\\''s"}}' '${s.url}/v1/secret/data/curl-me'`);
  // Nothing was sent.
  expect((await s.api('GET', 'secret/data/curl-me')).status).toBe(404);
  // The printed command, run by sh with `strongroom` on PATH, writes the secret.
  const bin = scratchDir('sr-curl-bin-');
  writeFileSync(join(bin, 'strongroom'), `#!/bin/sh\nexec "${process.execPath}" "${resolve(__dirname, '../../core/bin/strongroom.js')}" "$@"\n`);
  chmodSync(join(bin, 'strongroom'), 0o755);
  await new Promise<void>((res, rej) =>
    execFile('sh', ['-ec', curl], { env: { PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: cli.home, STRONGROOM_TOKEN: s.rootToken } }, (err, _o, e) => (err ? rej(new Error(`${err.message}\n${e}`)) : res())),
  );
  expect((await s.api('GET', 'secret/data/curl-me')).body.data.data).toEqual({ a: "it's" });

  // A read has no -X; the token in use never appears.
  const read = ok(await cli.run(['read', '-output-curl-string', 'sys/health'])).stdout.trim();
  expect(read).toBe(`curl -H 'X-Service-Request: true' -H "X-Service-Token: $(strongroom print token)" '${s.url}/v1/sys/health'`);
  expect(read).not.toContain(s.rootToken);
  // kv asks the server for the mount's version first, then prints the data request.
  expect(ok(await cli.run(['kv', 'get', '-output-curl-string', 'secret/curl-me'])).stdout.trim()).toBe(`curl -H 'X-Service-Request: true' -H "X-Service-Token: $(strongroom print token)" '${s.url}/v1/secret/data/curl-me'`);
  const del = ok(await cli.run(['kv', 'metadata', 'delete', '-output-curl-string', 'secret/curl-me']));
  expect(del.stdout).toMatch(/^curl -X DELETE /);
  expect((await s.api('GET', 'secret/data/curl-me')).status).toBe(200);
});

it('-non-interactive never prompts: on a terminal, a login without a token fails at once', async () => {
  const home = scratchDir('sr-ni-home-');
  const r = await runInTerminal(['login', '-non-interactive'], 'Token (will be hidden): ', 'typed-too-late', { HOME: home, STRONGROOM_ADDR: s.url });
  expect(r.prompted).toBe(false);
  expect(r.code).toBe(1);
  expect(r.screen).toContain('-non-interactive: Token needed, and no prompt is allowed');
  expect(existsSync(join(home, '.strongroom-token'))).toBe(false);
  // Stdin that is not a terminal is not a prompt: still read.
  const piped = await cliRunner({ addr: s.url }).run(['login', '-non-interactive', '-no-store', '-field=token_policies'], { input: s.rootToken });
  expect(ok(piped).stdout.trim()).toBe('["root"]');
});

it('read sys/health prints a table of its fields', async () => {
  const r = ok(await cli.run(['read', 'sys/health']));
  expect(r.stdout).toMatch(/^Key\s+Value\n---\s+-----\n/);
  expect(r.stdout).toMatch(/^initialized\s+true$/m);
  expect(r.stdout).toMatch(/^sealed\s+false$/m);
  expect(r.stdout).toMatch(/^version\s+\S+$/m);
  expect(JSON.parse(ok(await cli.run(['read', '-format=json', 'sys/health'])).stdout)).toMatchObject({ initialized: true, sealed: false });
  expect(ok(await cli.run(['read', '-field=sealed', 'sys/seal-status'])).stdout.trim()).toBe('false');
});

it('login -no-store does not claim the token was stored; a plain login does and stores it', async () => {
  const c = cliRunner({ addr: s.url });
  const r = ok(await c.run(['login', '-no-store', s.rootToken]));
  expect(r.stdout).not.toContain('already stored');
  expect(r.stdout).toContain('The token was NOT stored');
  expect(existsSync(join(c.home, '.strongroom-token'))).toBe(false);
  const stored = ok(await c.run(['login', s.rootToken]));
  expect(stored.stdout).toContain('already stored in the token helper');
  expect(existsSync(join(c.home, '.strongroom-token'))).toBe(true);
});

it('a bad token on kv get is permission denied (exit 2), not a missing mount', async () => {
  ok(await cli.run(['kv', 'put', 'secret/guarded', 'a=1']));
  const r = await cli.run(['kv', 'get', 'secret/guarded'], { token: 'not-a-token' });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('permission denied');
  expect(r.stderr).not.toContain('no KV mount');
  // A mount that is not there is still said so.
  const missing = await cli.run(['kv', 'get', 'nowhere/x']);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain('no KV mount found for nowhere/x');
});

it('kv enable-versioning turns a version 1 mount into version 2, each secret becoming its version 1', async () => {
  ok(await cli.run(['secrets', 'enable', '-path=old', 'kv']));
  ok(await cli.run(['kv', 'put', 'old/app', 'password=hunter2']));
  ok(await cli.run(['kv', 'put', 'old/team/db', 'user=ana', 'port=5432']));
  expect((await s.api('GET', 'old/data/app')).status).toBe(404);

  const r = ok(await cli.run(['kv', 'enable-versioning', 'old']));
  expect(r.stdout.trim()).toBe('Success! Tuned the secrets engine at: old/');
  const app = await s.api('GET', 'old/data/app');
  expect(app.status).toBe(200);
  expect(app.body.data.data).toEqual({ password: 'hunter2' });
  expect(app.body.data.metadata.version).toBe(1);
  expect(JSON.parse(ok(await cli.run(['kv', 'get', '-format=json', 'old/team/db'])).stdout).data.data).toEqual({ user: 'ana', port: '5432' });
  expect(JSON.parse(ok(await cli.run(['kv', 'list', '-format=json', 'old/'])).stdout)).toEqual(['app', 'team/']);
  // Versioned from now on; the v1 entries are gone (a v1 read path is now a v2 route).
  ok(await cli.run(['kv', 'put', 'old/app', 'password=hunter3']));
  expect((await s.api('GET', 'old/metadata/app')).body.data.current_version).toBe(2);
  expect((await s.api('GET', 'old/data/app?version=1')).body.data.data).toEqual({ password: 'hunter2' });
  const mounts = await s.api('GET', 'sys/mounts/old/tune');
  expect(mounts.body.data.options).toMatchObject({ version: '2' });
  // No way back, and no version 3.
  expect((await s.api('POST', 'sys/mounts/old/tune', { options: { version: '1' } })).status).toBe(400);
  const three = await s.api('POST', 'sys/mounts/old/tune', { options: { version: '3' } });
  expect(three.status).toBe(400);
  expect(three.text).toContain('options.version');
  expect((await s.api('GET', 'old/data/app')).status).toBe(200);
});

it('strongroom -h lists every verb, the new ones among them', async () => {
  const help = ok(await cli.run(['-h'])).stdout;
  const lineOf = (top: string) => help.split('\n').find((l) => l.trim().split(/\s+/)[0] === top);
  for (const name of ['server', 'version', ...Object.keys(COMMANDS)]) {
    const [top, ...rest] = name.split(' ');
    const line = lineOf(top!);
    expect([name, line !== undefined]).toEqual([name, true]);
    if (rest.length) expect([name, line!.split(/,\s*|\s{2,}/).map((w) => w.trim())]).toEqual([name, expect.arrayContaining([rest.join(' ')])]);
  }
  for (const verb of ['monitor', 'debug', 'print token', 'kv enable-versioning', 'token capabilities']) expect(Object.keys(COMMANDS)).toContain(verb);
});
