/**
 * The `strongroom` CLI against a real dev server: the safety rules (help does
 * nothing else, unknown flags fail, `token revoke` needs an argument or
 * -self), every client verb's exit code, stdout and stderr, and Vault's
 * input and output forms (@file, stdin, -format=json|yaml|table, -field).
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { execFile } from 'node:child_process';
import { cliRunner, ok } from '../helpers/cli';
import { scratchDir, startDevServer, type RunningServer } from '../helpers/server';
import { COMMANDS } from '../../core/src/cli/commands';

// Each CLI call is a process start; on a shared 2-core machine a test of many calls takes minutes.
jest.setTimeout(300_000);

let s: RunningServer;
let cli: ReturnType<typeof cliRunner>;
const run = (...args: string[]) => cli.run(args);

beforeAll(async () => {
  s = await startDevServer();
  cli = cliRunner({ addr: s.url, token: s.rootToken });
});

afterAll(async () => {
  await s.stop();
});

describe('safety rules', () => {
  it('-h, -help and --help print usage and do nothing else (kv delete -h does not delete)', async () => {
    ok(await run('kv', 'put', 'secret/keep', 'a=1'));
    for (const h of ['-h', '-help', '--help']) {
      const r = await run('kv', 'delete', h, 'secret/keep');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^Usage: strongroom kv delete /);
      expect(r.stderr).toBe('');
    }
    // After the flag too, and with other flags around it.
    expect((await run('kv', 'delete', 'secret/keep', '-versions=1', '-h')).code).toBe(0);
    expect((await run('delete', '-h', 'secret/data/keep')).code).toBe(0);
    expect((await run('token', 'revoke', '-h', '-self')).code).toBe(0);
    const still = ok(await run('kv', 'get', '-field=a', 'secret/keep'));
    expect(still.stdout.trim()).toBe('1');
    expect((await s.api('GET', 'auth/token/lookup-self')).status).toBe(200);
  });

  it('every verb has its own -h', async () => {
    // One process runs main() for every verb (starting ~70 processes would take minutes on a shared machine);
    // a few verbs go through the binary in the other tests.
    const script = `
      const { main } = require(${JSON.stringify(join(__dirname, '../../core/dist/cli/main.js'))});
      const { COMMANDS } = require(${JSON.stringify(join(__dirname, '../../core/dist/cli/commands.js'))});
      (async () => {
        const res = {};
        const write = process.stdout.write.bind(process.stdout);
        for (const name of ['server', ...Object.keys(COMMANDS)]) {
          let text = '';
          process.stdout.write = (c) => ((text += c), true);
          const code = await main([...name.split(' '), '-h']);
          process.stdout.write = write;
          res[name] = { code, text };
        }
        write(JSON.stringify(res));
      })();`;
    const out = await new Promise<string>((res, rej) => execFile(process.execPath, ['-e', script], { env: { PATH: process.env.PATH ?? '', STRONGROOM_ADDR: 'http://127.0.0.1:1' }, maxBuffer: 16 << 20 }, (err, stdout) => (err ? rej(err) : res(stdout))));
    const res = JSON.parse(out) as Record<string, { code: number; text: string }>;
    expect(Object.keys(res).length).toBe(Object.keys(COMMANDS).length + 1);
    for (const [name, r] of Object.entries(res)) {
      expect([name, r.code]).toEqual([name, 0]);
      expect(r.text).toContain(`Usage: strongroom ${name} `);
    }
    expect(res.server!.text).toContain('-dev-root-token-id');
    expect(res['token revoke']!.text).toContain('-self');
    expect(res['kv get']!.text).toContain('-version');
  });

  it('an unknown flag is an error with exit code 1 and nothing is done', async () => {
    const r = await run('secrets', 'enable', '-max-lease-tt=1h', '-path=typo', 'kv');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('flag provided but not defined: -max-lease-tt');
    expect(r.stdout).toBe('');
    expect((await s.api('GET', 'sys/mounts')).body.data['typo/']).toBeUndefined();
    // A value flag without a value, a bad boolean, bad format: all usage errors.
    expect((await run('kv', 'get', 'secret/keep', '-version')).code).toBe(1);
    expect((await run('token', 'create', '-orphan=maybe')).code).toBe(1);
    expect((await run('kv', 'get', '-format=xml', 'secret/keep')).code).toBe(1);
    expect((await run('read')).code).toBe(1);
    expect((await run('list', 'a', 'b')).code).toBe(1);
  });

  it('token revoke with no argument is an error; -self revokes the token in use', async () => {
    const t = (await s.api('POST', 'auth/token/create', { policies: ['default'] })).body.auth.client_token as string;
    const none = await cli.run(['token', 'revoke'], { token: t });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('-self');
    expect((await s.api('GET', 'auth/token/lookup-self', undefined, { token: t })).status).toBe(200);
    const self = await cli.run(['token', 'revoke', '-self'], { token: t });
    expect(ok(self).stdout).toContain('Success! Revoked token');
    expect((await s.api('GET', 'auth/token/lookup-self', undefined, { token: t })).status).toBe(403);
    expect((await run('token', 'revoke', '-self', 'x')).code).toBe(1);
  });

  it('unknown commands and bare groups exit 1; top-level help exits 0', async () => {
    const u = await run('frobnicate');
    expect(u.code).toBe(1);
    expect(u.stderr).toContain('Unknown command: frobnicate');
    const g = await run('kv');
    expect(g.code).toBe(1);
    expect(g.stderr).toContain('Subcommands:');
    const gh = await run('kv', '-h');
    expect(gh.code).toBe(0);
    expect(gh.stdout).toContain('metadata get');
    for (const h of ['-h', '--help', 'help']) {
      const r = await run(h);
      expect(r.code).toBe(0);
      for (const verb of ['operator', 'lease', 'audit', 'namespace', 'unwrap', 'path-help', 'patch']) expect(r.stdout).toContain(verb);
    }
    expect(ok(await run('version')).stdout).toMatch(/^Strongroom v\d/);
  });

  it('status exits 0 unsealed and 1 when the server cannot be reached', async () => {
    const up = ok(await run('status'));
    expect(up.stdout).toMatch(/Sealed\s+false/);
    expect(JSON.parse(ok(await run('status', '-format=json')).stdout).sealed).toBe(false);
    const down = await cli.run(['status'], { env: { STRONGROOM_ADDR: 'http://127.0.0.1:1' } });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('Error checking seal status');
    // Other verbs report an unreachable server as an error (2), not a crash.
    const read = await cli.run(['read', 'secret/data/keep'], { env: { STRONGROOM_ADDR: 'http://127.0.0.1:1' } });
    expect(read.code).toBe(2);
    expect(read.stderr).toContain('ECONNREFUSED');
  });

  it('npx strongroom -h reaches our help, not npm\'s', async () => {
    const r = await new Promise<{ code: number; stdout: string }>((res) =>
      execFile('npx', ['--no-install', 'strongroom', '-h'], { cwd: join(__dirname, '../..'), env: { ...process.env }, timeout: 60_000 }, (err, stdout) => res({ code: err ? 1 : 0, stdout })),
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: strongroom <command>');
  });
});

describe('path verbs and formats', () => {
  it('write takes K=V, K=@file, K=- (stdin), @file.json and - (JSON on stdin)', async () => {
    const dir = scratchDir('sr-cli-data-');
    writeFileSync(join(dir, 'v.txt'), 'from-file');
    writeFileSync(join(dir, 'body.json'), JSON.stringify({ data: { j: 'son', n: 2 } }));
    ok(await run('write', 'secret/data/w3', `@${join(dir, 'body.json')}`));
    expect((await s.api('GET', 'secret/data/w3')).body.data.data).toEqual({ j: 'son', n: 2 });
    ok(await cli.run(['write', 'secret/data/w4', '-'], { input: JSON.stringify({ data: { s: 'tdin' } }) }));
    expect((await s.api('GET', 'secret/data/w4')).body.data.data).toEqual({ s: 'tdin' });
    writeFileSync(join(dir, 'pol.hcl'), 'path "frompair/*" { capabilities = ["read"] }');
    ok(await run('write', 'sys/policies/acl/frompair', `policy=@${join(dir, 'pol.hcl')}`));
    expect((await s.api('GET', 'sys/policies/acl/frompair')).body.data.policy).toContain('frompair/*');
    ok(await run('kv', 'put', 'secret/vals', `f=@${join(dir, 'v.txt')}`, 'list=a', 'list=b'));
    expect((await s.api('GET', 'secret/data/vals')).body.data.data).toEqual({ f: 'from-file', list: ['a', 'b'] });
    ok(await cli.run(['kv', 'put', 'secret/vals2', 'pw=-'], { input: 'hunter2\n' }));
    expect((await s.api('GET', 'secret/data/vals2')).body.data.data).toEqual({ pw: 'hunter2' });
    const noData = await run('write', 'secret/data/w5');
    expect(noData.code).toBe(1);
    expect(noData.stderr).toContain('Must supply data or use -force');
    const bad = await run('write', 'secret/data/w5', 'novalue');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('key=value');
    const missing = await run('write', 'secret/data/w5', '@/nonexistent.json');
    expect(missing.code).toBe(1);
  });

  it('read, -field (data and auth fields), -format=json|yaml|table, STRONGROOM_FORMAT', async () => {
    ok(await run('kv', 'put', 'secret/fmt', 'user=alice', 'pass=s3cret'));
    const table = ok(await run('read', 'secret/data/fmt')).stdout.split('\n');
    expect(table[0]).toMatch(/^Key\s{2,}Value$/);
    // Aligned: every value starts in the same column.
    const col = table[0]!.indexOf('Value');
    for (const line of table.slice(2).filter(Boolean)) expect(line.slice(0, col).trimEnd().length).toBeLessThan(col);
    const json = JSON.parse(ok(await run('read', '-format=json', 'secret/data/fmt')).stdout);
    expect(json.data.data).toEqual({ user: 'alice', pass: 's3cret' });
    const yaml = parseYaml(ok(await run('read', '-format=yaml', 'secret/data/fmt')).stdout);
    expect(yaml.data.data).toEqual({ user: 'alice', pass: 's3cret' });
    const env = await cli.run(['kv', 'get', 'secret/fmt'], { env: { STRONGROOM_FORMAT: 'json' } });
    expect(JSON.parse(ok(env).stdout).data.data.user).toBe('alice');
    expect(ok(await run('kv', 'get', '-field=pass', 'secret/fmt')).stdout).toBe('s3cret\n');
    expect(ok(await run('kv', 'get', '-field=pass', '-format=json', 'secret/fmt')).stdout.trim()).toBe('"s3cret"');
    const absent = await run('kv', 'get', '-field=nope', 'secret/fmt');
    expect(absent.code).toBe(1);
    expect(absent.stderr).toContain('Field "nope" not present');
    const tok = ok(await run('token', 'create', '-policy=default', '-field=token')).stdout.trim();
    expect((await s.api('GET', 'auth/token/lookup-self', undefined, { token: tok })).status).toBe(200);
    const acc = ok(await run('token', 'create', '-field=token_accessor')).stdout.trim();
    expect(acc).toMatch(/^\S+$/);
    const notFound = await run('read', 'secret/data/absent');
    expect(notFound.code).toBe(2);
    expect(notFound.stderr).toContain('No value found at secret/data/absent');
  });

  it('list prints Keys (table) or the key array (json, yaml); delete; patch', async () => {
    ok(await run('kv', 'put', 'secret/dir/a', 'x=1'));
    ok(await run('kv', 'put', 'secret/dir/b', 'x=2'));
    expect(ok(await run('list', 'secret/metadata/dir')).stdout).toBe('Keys\n----\na\nb\n');
    expect(JSON.parse(ok(await run('list', '-format=json', 'secret/metadata/dir')).stdout)).toEqual(['a', 'b']);
    expect(parseYaml(ok(await run('list', '-format=yaml', 'secret/metadata/dir')).stdout)).toEqual(['a', 'b']);
    expect((await run('list', 'secret/metadata/nothing-here')).code).toBe(2);
    ok(await run('patch', 'secret/data/dir/a', '@' + writeJson({ data: { y: '2' } })));
    expect((await s.api('GET', 'secret/data/dir/a')).body.data.data).toEqual({ x: '1', y: '2' });
    expect(ok(await run('delete', 'secret/data/dir/b')).stdout).toContain('Success! Data deleted');
    expect((await s.api('GET', 'secret/data/dir/b')).status).toBe(404);
  });

  it('path-help prints the help of a path', async () => {
    const r = ok(await run('path-help', 'secret/'));
    expect(r.stdout).toContain('kv');
    expect((await run('path-help', 'nomount/')).code).toBe(2);
  });
});

function writeJson(v: unknown): string {
  const f = join(scratchDir('sr-cli-json-'), 'in.json');
  writeFileSync(f, JSON.stringify(v));
  return f;
}

describe('kv', () => {
  it('put, get -version, patch, list, delete, undelete, destroy, rollback, metadata get|put|delete', async () => {
    ok(await run('kv', 'put', 'secret/app', 'a=1', 'b=2'));
    ok(await run('kv', 'put', '-cas=1', 'secret/app', 'a=10', 'b=20'));
    const cas = await run('kv', 'put', '-cas=1', 'secret/app', 'a=x');
    expect(cas.code).toBe(2);
    expect(cas.stderr).toMatch(/check-and-set|cas/i);
    expect(ok(await run('kv', 'get', '-version=1', '-field=a', 'secret/app')).stdout).toBe('1\n');
    const got = ok(await run('kv', 'get', 'secret/app')).stdout;
    expect(got).toContain('Metadata');
    expect(got).toMatch(/a\s+10/);
    ok(await run('kv', 'patch', 'secret/app', 'b=21'));
    const missing = await run('kv', 'patch', 'secret/never-written', 'b=1');
    expect([missing.code, missing.stderr.trim()]).toEqual([2, 'No value found at secret/data/never-written']);
    expect((await s.api('GET', 'secret/data/app')).body.data.data).toEqual({ a: '10', b: '21' });
    ok(await run('kv', 'patch', '-method=rw', 'secret/app', 'c=3'));
    expect((await s.api('GET', 'secret/data/app')).body.data).toMatchObject({ data: { a: '10', b: '21', c: '3' }, metadata: { version: 4 } });
    expect(ok(await run('kv', 'list', 'secret/')).stdout).toContain('app');
    expect(ok(await run('kv', 'list', '-mount=secret', '')).stdout).toContain('app');
    ok(await run('kv', 'delete', 'secret/app'));
    expect((await run('kv', 'get', 'secret/app')).code).toBe(2);
    expect((await run('kv', 'undelete', 'secret/app')).code).toBe(1); // -versions is required
    ok(await run('kv', 'undelete', '-versions=4', 'secret/app'));
    expect(ok(await run('kv', 'get', '-mount=secret', '-field=c', 'app')).stdout).toBe('3\n');
    ok(await run('kv', 'delete', '-versions=2', 'secret/app'));
    ok(await run('kv', 'destroy', '-versions=3', 'secret/app'));
    const meta = JSON.parse(ok(await run('kv', 'metadata', 'get', '-format=json', 'secret/app')).stdout).data;
    expect(meta.versions['2'].deletion_time).not.toBe('');
    expect(meta.versions['3'].destroyed).toBe(true);
    ok(await run('kv', 'rollback', '-version=1', 'secret/app'));
    expect((await s.api('GET', 'secret/data/app')).body.data).toMatchObject({ data: { a: '1', b: '2' }, metadata: { version: 5 } });
    expect((await run('kv', 'rollback', '-version=3', 'secret/app')).code).toBe(2); // destroyed
    ok(await run('kv', 'metadata', 'put', '-max-versions=7', '-custom-metadata=owner=ops', 'secret/app'));
    const m2 = (await s.api('GET', 'secret/metadata/app')).body.data;
    expect(m2.max_versions).toBe(7);
    expect(m2.custom_metadata).toEqual({ owner: 'ops' });
    ok(await run('kv', 'metadata', 'delete', 'secret/app'));
    expect((await s.api('GET', 'secret/metadata/app')).status).toBe(404);
    const v1 = await run('kv', 'get', '-version=1', 'nomount/x');
    expect(v1.code).toBe(2);
  });

  it('KV version 1: put, get, list, delete; v2-only verbs refuse it', async () => {
    ok(await run('secrets', 'enable', '-path=kv1', '-version=1', 'kv'));
    ok(await run('kv', 'put', 'kv1/x', 'k=v'));
    expect(ok(await run('kv', 'get', '-field=k', 'kv1/x')).stdout).toBe('v\n');
    expect(ok(await run('kv', 'list', 'kv1')).stdout).toContain('x');
    const patch = await run('kv', 'patch', 'kv1/x', 'k=w');
    expect(patch.code).toBe(2);
    expect(patch.stderr).toContain('KV version 1');
    ok(await run('kv', 'delete', 'kv1/x'));
    expect((await run('kv', 'get', 'kv1/x')).code).toBe(2);
  });
});

describe('token and login', () => {
  it('create (flags), lookup, lookup -accessor, renew, renew -accessor, capabilities, revoke -accessor, revoke -mode=orphan', async () => {
    expect((await s.api('PUT', 'sys/policies/acl/reader', { policy: 'path "secret/data/*" { capabilities = ["read"] }' })).status).toBe(204);
    const created = JSON.parse(ok(await run('token', 'create', '-policy=reader', '-policy=default', '-ttl=1h', '-explicit-max-ttl=2h', '-display-name=ci', '-use-limit=50', '-metadata=team=ops', '-format=json')).stdout).auth;
    expect(created.policies).toEqual(expect.arrayContaining(['reader', 'default']));
    const look = JSON.parse(ok(await run('token', 'lookup', '-format=json', created.client_token)).stdout).data;
    expect(look).toMatchObject({ display_name: 'token-ci', num_uses: 50, meta: { team: 'ops' } });
    expect(look.explicit_max_ttl).toBe(7200);
    const byAcc = JSON.parse(ok(await run('token', 'lookup', '-accessor', '-format=json', created.accessor)).stdout).data;
    expect(byAcc.accessor).toBe(created.accessor);
    expect(byAcc.id).toBeFalsy(); // never the token itself by accessor
    // Before the fix, -accessor was sent as a token: the accessor must not be accepted as one.
    expect((await run('token', 'lookup', created.accessor)).code).toBe(2);
    const self = JSON.parse(ok(await cli.run(['token', 'lookup', '-format=json'], { token: created.client_token })).stdout).data;
    expect(self.accessor).toBe(created.accessor);
    expect(ok(await run('token', 'renew', '-increment=30m', '-field=token_duration', created.client_token)).stdout.trim()).toBe('1800');
    expect(ok(await run('token', 'renew', '-accessor', '-increment=20m', '-field=token_duration', created.accessor)).stdout.trim()).toBe('1200');
    expect(ok(await cli.run(['token', 'renew', '-increment=10m', '-field=token_duration'], { token: created.client_token })).stdout.trim()).toBe('600');
    expect(ok(await run('token', 'capabilities', created.client_token, 'secret/data/x')).stdout.trim()).toBe('read');
    expect(ok(await run('token', 'capabilities', '-accessor', created.accessor, 'secret/data/x')).stdout.trim()).toBe('read');
    expect(ok(await cli.run(['token', 'capabilities', 'sys/mounts'], { token: created.client_token })).stdout.trim()).toBe('deny');
    expect(JSON.parse(ok(await run('token', 'capabilities', '-format=json', 'sys/mounts')).stdout)).toEqual(['root']);
    ok(await run('token', 'revoke', '-accessor', created.accessor));
    expect((await s.api('GET', 'auth/token/lookup-self', undefined, { token: created.client_token })).status).toBe(403);

    const parent = (await s.api('POST', 'auth/token/create', { policies: ['root'] })).body.auth.client_token as string;
    const child = (await s.api('POST', 'auth/token/create', { policies: ['default'] }, { token: parent })).body.auth.client_token as string;
    ok(await run('token', 'revoke', '-mode=orphan', parent));
    expect((await s.api('GET', 'auth/token/lookup-self', undefined, { token: parent })).status).toBe(403);
    expect((await s.api('GET', 'auth/token/lookup-self', undefined, { token: child })).status).toBe(200);
    ok(await run('token', 'revoke', child));
    expect((await s.api('GET', 'auth/token/lookup-self', undefined, { token: child })).status).toBe(403);
    const orphan = JSON.parse(ok(await run('token', 'create', '-orphan', '-no-default-policy', '-policy=reader', '-format=json')).stdout).auth;
    expect(orphan.policies).toEqual(['reader']);
  });

  it('login with a token (argument or stdin) writes ~/.strongroom-token mode 0600; login -method=approle', async () => {
    const t = (await s.api('POST', 'auth/token/create', { policies: ['default'] })).body.auth.client_token as string;
    const r = ok(await cli.run(['login', t], { token: null }));
    expect(r.stdout).toContain('Success! You are now authenticated');
    const file = join(cli.home, '.strongroom-token');
    expect(readFileSync(file, 'utf8')).toBe(t);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const who = JSON.parse(ok(await cli.run(['token', 'lookup', '-format=json'], { token: null })).stdout).data;
    expect(who.id).toBe(t);
    expect(ok(await cli.run(['login', '-field=token_accessor', '-'], { token: null, input: `${t}\n` })).stdout.trim()).toBe(who.accessor);
    const bad = await cli.run(['login', 'not-a-token'], { token: null });
    expect(bad.code).toBe(2);
    expect(readFileSync(file, 'utf8')).toBe(t);

    ok(await run('auth', 'enable', 'approle'));
    await s.api('POST', 'auth/approle/role/ci', { token_policies: ['reader'] });
    const roleId = (await s.api('GET', 'auth/approle/role/ci/role-id')).body.data.role_id as string;
    const secretId = (await s.api('POST', 'auth/approle/role/ci/secret-id')).body.data.secret_id as string;
    const ar = ok(await cli.run(['login', '-method=approle', '-field=token', `role_id=${roleId}`, `secret_id=${secretId}`], { token: null }));
    expect(readFileSync(file, 'utf8')).toBe(ar.stdout.trim());
    expect(existsSync(file)).toBe(true);
  });
});

describe('mounts, policies, audit, plugins, leases, namespaces, unwrap', () => {
  it('secrets enable (with Vault\'s flags), list, tune, disable; move reports the server\'s answer', async () => {
    ok(await run('secrets', 'enable', '-path=team', '-description=team kv', '-default-lease-ttl=1h', '-max-lease-ttl=2h', '-options=version=2', 'kv'));
    const mounts = (await s.api('GET', 'sys/mounts')).body.data['team/'];
    expect(mounts).toMatchObject({ type: 'kv', description: 'team kv', options: { version: '2' } });
    expect(mounts.config).toMatchObject({ default_lease_ttl: 3600, max_lease_ttl: 7200 });
    const list = ok(await run('secrets', 'list')).stdout;
    expect(list).toMatch(/^Path\s+Type\s+Accessor\s+Description$/m);
    expect(list).toMatch(/^team\/\s+kv\s+\S+\s+team kv$/m);
    expect(ok(await run('secrets', 'list', '-detailed')).stdout).toMatch(/^team\/\s+kv\s+\S+\s+3600\s+7200/m);
    expect(JSON.parse(ok(await run('secrets', 'list', '-format=json')).stdout)['team/'].type).toBe('kv');
    ok(await run('secrets', 'tune', '-max-lease-ttl=3h', '-description=tuned', 'team'));
    const tuned = (await s.api('GET', 'sys/mounts/team/tune')).body.data;
    expect(tuned).toMatchObject({ max_lease_ttl: 10800, description: 'tuned' });
    const move = await run('secrets', 'move', 'team', 'team2');
    if (move.code === 0) {
      expect((await s.api('GET', 'sys/mounts')).body.data['team2/']).toBeDefined();
    } else {
      expect(move.code).toBe(2);
      expect(move.stderr).toContain('Error moving mount');
    }
    const target = move.code === 0 ? 'team2' : 'team';
    expect(ok(await run('secrets', 'disable', target)).stdout).toContain('Success! Disabled the secrets engine');
    expect((await s.api('GET', 'sys/mounts')).body.data[`${target}/`]).toBeUndefined();
    expect((await run('secrets', 'enable', 'no-such-engine')).code).toBe(2);
  });

  it('auth enable, list, tune, disable', async () => {
    ok(await run('auth', 'enable', '-path=ar2', '-description=second', 'approle'));
    expect(ok(await run('auth', 'list')).stdout).toMatch(/^ar2\/\s+approle\s+\S+\s+second$/m);
    ok(await run('auth', 'tune', '-default-lease-ttl=15m', 'ar2'));
    expect((await s.api('GET', 'sys/auth/ar2/tune')).body.data.default_lease_ttl).toBe(900);
    ok(await run('auth', 'disable', 'ar2'));
    expect((await s.api('GET', 'sys/auth')).body.data['ar2/']).toBeUndefined();
  });

  it('policy write (file and stdin), read, list, delete, fmt', async () => {
    const dir = scratchDir('sr-cli-pol-');
    const file = join(dir, 'p.hcl');
    writeFileSync(file, 'path "secret/*" {capabilities=["read","list"]}\n');
    expect(ok(await run('policy', 'write', 'p1', file)).stdout).toContain('Success! Uploaded policy: p1');
    ok(await cli.run(['policy', 'write', 'p2', '-'], { input: 'path "x/*" { capabilities = ["read"] }' }));
    expect(ok(await run('policy', 'read', 'p1')).stdout).toContain('secret/*');
    expect(JSON.parse(ok(await run('policy', 'read', '-format=json', 'p2')).stdout).data.policy).toContain('x/*');
    expect(ok(await run('policy', 'list')).stdout.split('\n')).toEqual(expect.arrayContaining(['default', 'p1', 'p2', 'root']));
    expect(JSON.parse(ok(await run('policy', 'list', '-format=json')).stdout)).toEqual(expect.arrayContaining(['p1', 'p2']));
    ok(await run('policy', 'delete', 'p2'));
    expect((await run('policy', 'read', 'p2')).code).toBe(2);
    ok(await run('policy', 'fmt', file));
    expect(readFileSync(file, 'utf8')).toBe('path "secret/*" {\n  capabilities = ["read", "list"]\n}\n');
    writeFileSync(file, 'path "a" { capabilities = ["fly"] }');
    const bad = await run('policy', 'fmt', file);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('Error parsing policy');
    expect((await run('policy', 'write', 'p3', join(dir, 'missing.hcl'))).code).toBe(1);
  });

  it('audit enable, list, disable', async () => {
    const log = join(scratchDir('sr-cli-audit-'), 'audit.log');
    expect(ok(await run('audit', 'enable', '-path=a1', '-description=ops', 'file', `file_path=${log}`)).stdout).toContain('Success! Enabled the file audit device at: a1/');
    expect(ok(await run('audit', 'list')).stdout).toMatch(/^a1\/\s+file\s+ops$/m);
    expect(ok(await run('audit', 'list', '-detailed')).stdout).toContain(log);
    ok(await run('read', 'sys/mounts'));
    expect(readFileSync(log, 'utf8')).toContain('sys/mounts');
    ok(await run('audit', 'disable', 'a1'));
    expect(ok(await run('audit', 'list')).stdout).toContain('No audit devices are enabled.');
  });

  it('plugin list, list TYPE, info, reload', async () => {
    expect(ok(await run('plugin', 'list')).stdout).toMatch(/^kv\s+secret\s+v/m);
    expect(ok(await run('plugin', 'list', 'database')).stdout).toContain('postgresql-database-plugin');
    expect(ok(await run('plugin', 'list', 'auth')).stdout).not.toContain('postgresql');
    expect((await run('plugin', 'list', 'bogus')).code).toBe(1);
    expect(ok(await run('plugin', 'info', '-field=builtin', 'secret', 'kv')).stdout.trim()).toBe('true');
    expect((await run('plugin', 'info', 'secret', 'nope')).code).toBe(2);
    const before = (await s.api('GET', 'sys/mounts')).body.data['secret/'].running_plugin_version;
    expect(ok(await run('plugin', 'reload', '-mounts=secret/')).stdout).toMatch(/reload_id|Success/);
    expect(ok(await run('plugin', 'reload', '-plugin=kv')).stdout).toMatch(/reload_id|Success/);
    expect((await s.api('GET', 'sys/mounts')).body.data['secret/'].running_plugin_version).toBe(before);
    expect((await run('plugin', 'reload')).code).toBe(1);
    expect((await run('plugin', 'register', 'secret', 'x')).code).toBe(1); // -sha256 required
  });

  it('lease verbs refuse bad ids with the server\'s error; -force needs -prefix', async () => {
    const r = await run('lease', 'lookup', 'secret/nope/1');
    expect(r.code).toBe(2);
    expect((await run('lease', 'revoke', '-force', 'secret/')).code).toBe(1);
    expect(ok(await run('lease', 'revoke', '-prefix', 'secret/')).stdout).toContain('Success! Revoked any leases with prefix: secret/');
  });

  it('-wrap-ttl (and STRONGROOM_WRAP_TTL) wraps the verb\'s response; unwrap gives it back once', async () => {
    ok(await run('kv', 'put', 'secret/wrapped', 'pw=s3cret'));
    // kv's mount lookup is not wrapped (as in Vault), the read is: the secret is not printed, the wrap info is.
    const table = ok(await run('kv', 'get', '-wrap-ttl=5m', 'secret/wrapped'));
    expect(table.stdout).toMatch(/^wrapping_token:?\s+\S+/m);
    expect(table.stdout).toMatch(/^wrapping_token_ttl:?\s+5m|^wrapping_token_ttl:?\s+300/m);
    expect(table.stdout).not.toContain('s3cret');
    const token = ok(await run('kv', 'get', '-wrap-ttl=5m', '-field=wrapping_token', 'secret/wrapped')).stdout.trim();
    expect(ok(await run('unwrap', '-field=data', token)).stdout).toContain('s3cret');
    expect((await run('unwrap', token)).code).toBe(2);
    // The environment variable does the same for any verb (here a token lookup); json shows wrap_info only.
    const viaEnv = await cli.run(['token', 'lookup', '-format=json'], { env: { STRONGROOM_WRAP_TTL: '90s' } });
    const body = JSON.parse(ok(viaEnv).stdout);
    expect(body.wrap_info.ttl).toBe(90);
    expect(body.data).toBeFalsy();
    const looked = await s.api('POST', 'sys/wrapping/lookup', { token: body.wrap_info.token });
    expect(looked.body.data.creation_path).toBe('auth/token/lookup-self');
  });
});
