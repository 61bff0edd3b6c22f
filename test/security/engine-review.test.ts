/**
 * Security review of issue 26, findings 1, 8 and 9, against the real binary:
 * identity templates that must not trust what a caller sets on its own token,
 * deeply nested HCL answered with a 400, and sys/internal/ui/mounts/:path
 * answering an unauthorised caller alike for an existing and a missing mount.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { scratchDir, startDevServer, type RunningServer, tokenWithPolicy } from '../helpers/server';

const run = promisify(execFile);

jest.setTimeout(180_000);

let s: RunningServer;
beforeAll(async () => {
  s = await startDevServer();
});
afterAll(async () => {
  await s.stop('SIGKILL');
});

async function ok(method: string, path: string, body?: unknown, token?: string) {
  const r = await s.api(method, path, body, token === undefined ? {} : { token });
  if (r.status < 200 || r.status > 299) throw new Error(`${method} ${path} -> ${r.status} ${r.text}`);
  return r;
}

describe('finding 1: identity templates never resolve from what the caller sets on its token', () => {
  const dir = scratchDir('sr-idtpl-');
  let userKey: string;
  /** The principals of an OpenSSH certificate, as ssh-keygen reads them. */
  const principalsOf = async (signed: string) => {
    const file = join(dir, 'cert.pub');
    writeFileSync(file, signed);
    const { stdout } = await run('ssh-keygen', ['-L', '-f', file]);
    const m = /Principals:\s*\n((?:\s{16,}\S+\n)*)/.exec(stdout);
    return (m?.[1] ?? '').split('\n').map((l) => l.trim()).filter((l) => l !== '');
  };
  let approleAccessor: string;
  let signer: string;

  beforeAll(async () => {
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'key')]);
    userKey = readFileSync(join(dir, 'key.pub'), 'utf8');
    await ok('POST', 'sys/mounts/ssh', { type: 'ssh' });
    await ok('POST', 'ssh/config/ca', { key_type: 'ed25519' });
    await ok('POST', 'sys/auth/approle', { type: 'approle' });
    approleAccessor = (await ok('GET', 'sys/auth')).body.data['approle/'].accessor;
    const viaMeta = { key_type: 'ca', allow_user_certificates: true, allowed_users_template: true };
    await ok('POST', 'ssh/roles/meta', { ...viaMeta, allowed_users: '{{identity.entity.metadata.ssh_user}}' });
    await ok('POST', 'ssh/roles/name', { ...viaMeta, allowed_users: '{{identity.entity.name}}' });
    await ok('POST', 'ssh/roles/default-user', { ...viaMeta, allowed_users: '*', default_user: '{{identity.entity.metadata.ssh_user}}', default_user_template: true });
    await ok('POST', 'ssh/roles/extensions', {
      key_type: 'ca', allow_user_certificates: true, allowed_users: 'deploy', default_user: 'deploy',
      default_extensions: { 'permit-pty': '', 'login@strongroom': '{{identity.entity.metadata.ssh_user}}' }, default_extensions_template: true,
    });
    await ok('POST', 'ssh/roles/alias', { ...viaMeta, allowed_users: `{{identity.entity.aliases.${approleAccessor}.metadata.role_name}}` });
    // A token that may sign and create child tokens: all a caller needs to try the escalation.
    signer = await tokenWithPolicy(s, 'path "ssh/sign/*" { capabilities = ["update"] }\npath "auth/token/create" { capabilities = ["update"] }');
  });

  const child = async (parent: string, extra: Record<string, unknown>) => (await ok('POST', 'auth/token/create', extra, parent)).body.auth.client_token as string;
  const sign = (role: string, token: string, principals?: string) =>
    s.api('POST', `ssh/sign/${role}`, { public_key: userKey, ...(principals === undefined ? {} : { valid_principals: principals }) }, { token });

  it('a child token with meta ssh_user=root gets no certificate for root', async () => {
    const forged = await child(signer, { meta: { ssh_user: 'root' }, display_name: 'root' });
    const r = await sign('meta', forged, 'root');
    expect(r.status).toBe(400);
    expect(r.body.errors.join(' ')).toMatch(/valid_principals.*no identity entity/);
    // Nor through the entity's name (the display name the caller chose), the default user or a default extension.
    expect((await sign('name', forged, 'token-root')).status).toBe(400);
    const viaDefault = await sign('default-user', forged);
    expect(viaDefault.status).toBe(400);
    expect(viaDefault.body.errors.join(' ')).toContain('"default_user"');
    const viaExtension = await sign('extensions', forged);
    expect(viaExtension.status).toBe(400);
    expect(viaExtension.body.errors.join(' ')).toContain('"default_extensions"');
  });

  it('an AppRole login resolves its alias from the role the administrator set, and its children inherit that, not their meta', async () => {
    await ok('POST', 'auth/approle/role/deploy', { token_policies: [], secret_id_num_uses: 0 });
    const roleId = (await ok('GET', 'auth/approle/role/deploy/role-id')).body.data.role_id;
    const secretId = (await ok('POST', 'auth/approle/role/deploy/secret-id', {})).body.data.secret_id;
    await ok('PUT', 'sys/policies/acl/ssh-signer', { policy: 'path "ssh/sign/*" { capabilities = ["update"] }\npath "auth/token/create" { capabilities = ["update"] }' });
    await ok('POST', 'auth/approle/role/deploy', { token_policies: ['ssh-signer'] });
    const login = await ok('POST', 'auth/approle/login', { role_id: roleId, secret_id: secretId }, '');
    const appToken = login.body.auth.client_token as string;
    const r = await sign('alias', appToken, 'deploy');
    expect(r.status).toBe(200);
    expect(await principalsOf(r.body.data.signed_key)).toEqual(['deploy']);
    // The login's token meta (role_name) is no entity metadata either.
    expect((await sign('meta', appToken, 'deploy')).status).toBe(400);
    const forged = await child(appToken, { meta: { role_name: 'root' } });
    expect((await sign('alias', forged, 'root')).status).toBe(400);
    expect(await principalsOf((await sign('alias', forged, 'deploy')).body.data.signed_key)).toEqual(['deploy']);
    // A token no login issued has no alias at all.
    expect((await sign('alias', signer, 'deploy')).status).toBe(400);
  });
});

describe('finding 8: deeply nested HCL is a 400 naming the problem, not a 500', () => {
  const deep = (n: number) => `a = ${'['.repeat(n)}${']'.repeat(n)}`;

  it.each([
    ['an ACL policy', 'sys/policies/acl/deep'],
    ['a password policy', 'sys/policies/password/deep'],
  ])('%s of 50,000 nested lists', async (_what, path) => {
    for (const policy of [deep(50_000), `path "x" { capabilities = ["read"] }\n${deep(50_000)}`, `{"a": ${'['.repeat(50_000)}${']'.repeat(50_000)}}`]) {
      const r = await s.api('PUT', path, { policy });
      expect(r.status).toBe(400);
      expect(r.body.errors.join(' ')).toMatch(/nesting is deeper than 100 levels/);
    }
    // The server still answers.
    expect((await s.api('GET', 'sys/health')).status).toBe(200);
  });
});

describe('finding 9: sys/internal/ui/mounts/:path answers an unauthorised caller alike for existing and missing mounts', () => {
  it('gives the same status and body for a hidden mount and no mount at all', async () => {
    await ok('POST', 'sys/mounts/hidden-kv', { type: 'kv', options: { version: '2' } });
    const t = await tokenWithPolicy(s, 'path "secret/data/app/*" { capabilities = ["read"] }');
    for (const token of [t, null]) {
      const existing = await s.api('GET', 'sys/internal/ui/mounts/hidden-kv/data/x', undefined, { token });
      const missing = await s.api('GET', 'sys/internal/ui/mounts/no-such-kv/data/x', undefined, { token });
      expect(existing.status).toBe(403);
      expect(missing.status).toBe(existing.status);
      expect(missing.body.errors.map((e: string) => e.replace('no-such-kv', 'hidden-kv'))).toEqual(existing.body.errors);
    }
    // A caller allowed there still learns its mount.
    expect((await s.api('GET', 'sys/internal/ui/mounts/secret/data/app/x', undefined, { token: t })).body.data.path).toBe('secret/');
  });
});
