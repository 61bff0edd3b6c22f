/**
 * Userpass end to end: the real binary and the userpass plugin process.
 * Users, login, the issued token bound by the user's policies, password and
 * policy changes, renewal through the plugin; a wrong password and an unknown
 * user get the same answer; the password shows up in no response, audit
 * entry or log line.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliRunner } from '../helpers/cli';
import { scratchDir, startDevServer, type RunningServer } from '../helpers/server';

let s: RunningServer;
let auditFile: string;
const PASSWORD = 'correct horse battery staple';

beforeAll(async () => {
  s = await startDevServer();
  auditFile = join(scratchDir('sr-userpass-'), 'audit.log');
  expect((await s.api('PUT', 'sys/audit/file', { type: 'file', options: { file_path: auditFile } })).status).toBe(204);
  expect((await s.api('POST', 'sys/auth/userpass', { type: 'userpass' })).status).toBe(204);
  await s.api('PUT', 'sys/policies/acl/app', { policy: 'path "secret/data/app/*" { capabilities = ["read"] }' });
  await s.api('PUT', 'sys/policies/acl/other', { policy: 'path "secret/data/other/*" { capabilities = ["read"] }' });
  await s.api('POST', 'secret/data/app/db', { data: { password: 'p1' } });
  await s.api('POST', 'secret/data/other/db', { data: { password: 'p2' } });
});
afterAll(async () => {
  await s.stop();
});

const login = (user: string, password: string) => s.api('POST', `auth/userpass/login/${user}`, { password }, { token: null });

describe('userpass', () => {
  it('is a built-in auth plugin of the catalog', async () => {
    const r = await s.api('GET', 'sys/plugins/catalog/auth/userpass');
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ name: 'userpass', builtin: true });
    expect((await s.api('GET', 'sys/auth')).body.data['userpass/']).toMatchObject({ type: 'userpass' });
  });

  it('creates a user, logs in, and the token reads what its policy allows, nothing else', async () => {
    expect((await s.api('POST', 'auth/userpass/users/alice', { password: PASSWORD, token_policies: 'app', token_ttl: '10m', token_max_ttl: '1h' })).status).toBe(204);
    const user = await s.api('GET', 'auth/userpass/users/alice');
    expect(user.body.data).toMatchObject({ token_policies: ['app'], token_ttl: 600, token_max_ttl: 3600 });
    expect(user.text).not.toContain(PASSWORD);
    expect(user.body.data).not.toHaveProperty('password');
    expect((await s.api('LIST', 'auth/userpass/users')).body.data.keys).toEqual(['alice']);

    const res = await login('alice', PASSWORD);
    expect(res.status).toBe(200);
    expect(res.body.auth).toMatchObject({ token_policies: ['app', 'default'], lease_duration: 600, renewable: true, metadata: { username: 'alice' } });
    const token = res.body.auth.client_token as string;
    expect((await s.api('GET', 'secret/data/app/db', undefined, { token })).body.data.data).toEqual({ password: 'p1' });
    expect((await s.api('GET', 'secret/data/other/db', undefined, { token })).status).toBe(403);
    const self = await s.api('GET', 'auth/token/lookup-self', undefined, { token });
    expect(self.body.data).toMatchObject({ display_name: 'userpass-alice', path: 'auth/userpass/login/alice' });
  });

  it('answers a wrong password and an unknown user with the same 400', async () => {
    const wrong = await login('alice', 'not the password');
    const unknown = await login('nobody', 'not the password');
    for (const r of [wrong, unknown]) {
      expect(r.status).toBe(400);
      expect(r.body.errors).toEqual(['invalid username or password']);
    }
  });

  it('changes the password and the policies through their own endpoints', async () => {
    await s.api('POST', 'auth/userpass/users/bob', { password: 'first', token_policies: 'app' });
    expect((await s.api('POST', 'auth/userpass/users/bob/password', { password: 'second' })).status).toBe(204);
    expect((await login('bob', 'first')).status).toBe(400);
    expect((await login('bob', 'second')).status).toBe(200);
    expect((await s.api('POST', 'auth/userpass/users/bob/policies', { token_policies: 'other' })).status).toBe(204);
    const token = (await login('bob', 'second')).body.auth.client_token as string;
    expect((await s.api('GET', 'secret/data/other/db', undefined, { token })).status).toBe(200);
    expect((await s.api('GET', 'secret/data/app/db', undefined, { token })).status).toBe(403);
    expect((await s.api('POST', 'auth/userpass/users/nobody/password', { password: 'x' })).status).toBe(400);
  });

  it('renews a login token through the plugin while the user keeps its policies', async () => {
    await s.api('POST', 'auth/userpass/users/carol', { password: 'pw-carol', token_policies: 'app', token_ttl: '10m', token_max_ttl: '1h' });
    const token = (await login('carol', 'pw-carol')).body.auth.client_token as string;
    await s.api('POST', 'auth/userpass/users/carol', { token_ttl: '20m' });
    const renewed = await s.api('POST', 'auth/token/renew-self', {}, { token });
    expect(renewed.status).toBe(200);
    expect(renewed.body.auth.lease_duration).toBe(1200);
    await s.api('POST', 'auth/userpass/users/carol/policies', { token_policies: 'other' });
    const refused = await s.api('POST', 'auth/token/renew-self', {}, { token });
    expect(refused.status).toBe(400);
    expect(refused.body.errors.join(' ')).toContain('policies of the user have changed');
  });

  it('logs in with the CLI: strongroom login -method=userpass username=... password=...', async () => {
    await s.api('POST', 'auth/userpass/users/erin', { password: 'pw-erin', token_policies: 'app' });
    const cli = cliRunner({ addr: s.url });
    const r = await cli.run(['login', '-method=userpass', '-field=token', 'username=erin', 'password=pw-erin'], { token: null });
    expect(r.code).toBe(0);
    const lookup = await s.api('GET', 'auth/token/lookup-self', undefined, { token: r.stdout.trim() });
    expect(lookup.body.data.policies).toEqual(['app', 'default']);
    // The password from stdin, as the README shows it, keeps it out of the shell history.
    const fromStdin = await cli.run(['login', '-method=userpass', '-field=token', 'username=erin', 'password=-'], { token: null, input: 'pw-erin\n' });
    expect(fromStdin.code).toBe(0);
    expect(fromStdin.stdout.trim()).toMatch(/^\S+$/);
  });

  it('answers SCAN on users (the kit\'s recursive listing), paged by after and limit', async () => {
    for (const u of ['scan-c', 'scan-a', 'scan-b']) expect((await s.api('POST', `auth/userpass/users/${u}`, { password: PASSWORD, token_policies: ['default'] })).status).toBe(204);
    const listed = (await s.api('LIST', 'auth/userpass/users')).body.data.keys as string[];
    const scanned = await s.api('GET', 'auth/userpass/users?scan=true');
    expect(scanned.status).toBe(200);
    expect(scanned.body.data.keys).toEqual(listed);
    expect(listed).toEqual(expect.arrayContaining(['scan-a', 'scan-b', 'scan-c']));
    expect((await s.api('GET', 'auth/userpass/users?scan=true&after=scan-a&limit=1')).body.data.keys).toEqual(['scan-b']);
    // The generated OpenAPI document shows it, as OpenBao does: GET with scan=true, paged.
    const spec = (await s.api('GET', 'sys/internal/specs/openapi')).body;
    const op = spec.paths['/auth/userpass/users'].get;
    expect(op.operationId).toMatch(/^scan-/);
    expect(op.parameters.map((p: { name: string }) => p.name)).toEqual(['scan', 'after', 'limit']);
    const cubbyRead = spec.paths['/cubbyhole/{path}'].get;
    expect(cubbyRead.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['scan', 'after', 'limit']));
  });

  it('deletes a user: it can no longer log in', async () => {
    await s.api('POST', 'auth/userpass/users/dave', { password: 'pw-dave' });
    expect((await s.api('DELETE', 'auth/userpass/users/dave')).status).toBe(204);
    expect((await login('dave', 'pw-dave')).body.errors).toEqual(['invalid username or password']);
  });

  it('keeps the password out of the audit log and the server log', async () => {
    const audit = readFileSync(auditFile, 'utf8');
    expect(audit).toContain('auth/userpass/login/alice');
    expect(audit).not.toContain(PASSWORD);
    expect(s.output()).not.toContain(PASSWORD);
  });
});
