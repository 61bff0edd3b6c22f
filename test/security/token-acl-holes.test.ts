/**
 * Security review findings 1, 2, 3 and 5 (issue 11), each replayed as the
 * attacker tried it against the real binary: a narrowly-scoped token must not
 * reach what its policy denies by a body field, a letter's case, a missing
 * trailing slash or the orphan path.
 */
import { startDevServer, type RunningServer, tokenWithPolicy } from '../helpers/server';

jest.setTimeout(60_000);

let s: RunningServer;
beforeAll(async () => {
  s = await startDevServer();
  await s.api('PUT', 'sys/policies/acl/admin', { policy: 'path "*" { capabilities = ["create", "read", "update", "delete", "list", "sudo"] }' });
  expect((await s.api('POST', 'auth/token/roles/privileged', { allowed_policies: 'admin', orphan: false })).status).toBe(204);
});
afterAll(async () => {
  await s.stop('SIGKILL');
});

const tokenWith = (policy: string, extra: Record<string, unknown> = {}) => tokenWithPolicy(s, policy, extra);

describe('finding 1: a token role applies only through the path form create/:role_name', () => {
  const policy = 'path "auth/token/create" { capabilities = ["update"] }\npath "auth/token/create-orphan" { capabilities = ["update"] }\npath "auth/token/create/*" { capabilities = ["deny"] }';

  it.each(['auth/token/create', 'auth/token/create-orphan'])('%s ignores role_name in the body', async (path) => {
    const t = await tokenWith(policy);
    const r = await s.api('POST', path, { role_name: 'privileged' }, { token: t });
    expect(r.status).toBe(200);
    expect(r.body.auth.policies).not.toContain('admin');
    expect(r.body.warnings.join(' ')).toMatch(/role_name/);
    // And asking for the role's policy outright is the parent-subset rule's 400, not a role's grant.
    const asked = await s.api('POST', path, { role_name: 'privileged', policies: ['admin'] }, { token: t });
    expect(asked.status).toBe(400);
  });

  it('the path form is decided by the ACL on the role path', async () => {
    const t = await tokenWith(policy);
    expect((await s.api('POST', 'auth/token/create/privileged', {}, { token: t })).status).toBe(403);
    const root = await s.api('POST', 'auth/token/create/privileged', {});
    expect(root.status).toBe(200);
    expect(root.body.auth.policies).toContain('admin');
  });
});

describe('finding 2: token role names are case-sensitive, so a deny on the name cannot be bypassed by case', () => {
  const policy = [
    'path "auth/token/create/*" { capabilities = ["update"] }',
    'path "auth/token/create/privileged" { capabilities = ["deny"] }',
    'path "auth/token/roles/*" { capabilities = ["create", "read", "update"] }',
    'path "auth/token/roles/privileged" { capabilities = ["deny"] }',
  ].join('\n');

  it('create/PRIVILEGED is another (unknown) role, not privileged', async () => {
    const t = await tokenWith(policy);
    expect((await s.api('POST', 'auth/token/create/privileged', {}, { token: t })).status).toBe(403);
    const r = await s.api('POST', 'auth/token/create/PRIVILEGED', {}, { token: t });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toMatch(/unknown role/);
  });

  it('roles/PRIVILEGED writes a role of that exact name and leaves privileged alone', async () => {
    const t = await tokenWith(policy);
    expect((await s.api('POST', 'auth/token/roles/privileged', { allowed_policies: 'default' }, { token: t })).status).toBe(403);
    expect((await s.api('POST', 'auth/token/roles/PRIVILEGED', { allowed_policies: 'default', token_ttl: 60 }, { token: t })).status).toBe(204);
    const original = await s.api('GET', 'auth/token/roles/privileged');
    expect(original.body.data.allowed_policies).toEqual(['admin']);
    expect(original.body.data.token_ttl).toBe(0);
    expect((await s.api('GET', 'auth/token/roles/PRIVILEGED')).body.data.name).toBe('PRIVILEGED');
    expect((await s.api('LIST', 'auth/token/roles/')).body.data.keys).toEqual(expect.arrayContaining(['PRIVILEGED', 'privileged']));
  });
});

describe('finding 2 (policies): policy names stay lower-cased, and the ACL is checked on the name used', () => {
  it('a deny on sys/policies/acl/admin holds against ADMIN and Admin', async () => {
    const t = await tokenWith(['path "sys/policies/acl/*" { capabilities = ["create", "read", "update", "delete"] }', 'path "sys/policies/acl/admin" { capabilities = ["deny"] }', 'path "sys/policy/admin" { capabilities = ["deny"] }', 'path "sys/policy/*" { capabilities = ["create", "read", "update", "delete"] }'].join('\n'));
    const grab = 'path "*" { capabilities = ["read"] }';
    expect((await s.api('PUT', 'sys/policies/acl/ADMIN', { policy: grab }, { token: t })).status).toBe(403);
    expect((await s.api('PUT', 'sys/policy/Admin', { policy: grab }, { token: t })).status).toBe(403);
    expect((await s.api('DELETE', 'sys/policies/acl/Admin', undefined, { token: t })).status).toBe(403);
    expect((await s.api('GET', 'sys/policies/acl/admin')).body.data.policy).toMatch(/sudo/);
    // A name the token may write is still accepted in any case, and stored lower-cased.
    expect((await s.api('PUT', 'sys/policies/acl/Mixed', { policy: grab }, { token: t })).status).toBe(204);
    expect((await s.api('GET', 'sys/policies/acl/mixed', undefined, { token: t })).body.data.name).toBe('mixed');
  });
});

describe('finding 3: a list is authorised against the directory it lists (trailing slash added before routing and ACL)', () => {
  beforeAll(async () => {
    expect((await s.api('POST', 'secret/data/app/db', { data: { password: 'p' } })).status).toBe(200);
    expect((await s.api('POST', 'secret/data/other/x', { data: { v: '1' } })).status).toBe(200);
  });
  const policy = [
    'path "secret/metadata/*" { capabilities = ["list"] }',
    'path "secret/metadata/app/" { capabilities = ["deny"] }',
    'path "secret/metadata/app/*" { capabilities = ["deny"] }',
  ].join('\n');

  it('LIST without the slash is refused where the directory is denied', async () => {
    const t = await tokenWith(policy);
    expect((await s.api('LIST', 'secret/metadata/app/', undefined, { token: t })).status).toBe(403);
    expect((await s.api('LIST', 'secret/metadata/app', undefined, { token: t })).status).toBe(403);
    expect((await s.api('GET', 'secret/metadata/app?list=true', undefined, { token: t })).status).toBe(403);
    // Where the list is allowed, both spellings answer the directory.
    const other = await s.api('LIST', 'secret/metadata/other', undefined, { token: t });
    expect(other.status).toBe(200);
    expect(other.body.data.keys).toEqual(['x']);
  });

  it('LIST without the slash works on in-process backends (hvac and node-vault send it so)', async () => {
    await s.api('POST', 'auth/token/roles/listed', {});
    const roles = await s.api('LIST', 'auth/token/roles');
    expect(roles.status).toBe(200);
    expect(roles.body.data.keys).toContain('listed');
    const accessors = await s.api('GET', 'auth/token/accessors?list=true');
    expect(accessors.status).toBe(200);
    expect(accessors.body.data.keys.length).toBeGreaterThan(0);
  });
});

describe('finding 5: a use-limited token creates no token, orphan or not', () => {
  it.each([
    ['auth/token/create-orphan', {}],
    ['auth/token/create', {}],
    ['auth/token/create/orphaning', {}],
  ])('%s is refused', async (path, body) => {
    await s.api('POST', 'auth/token/roles/orphaning', { orphan: true });
    const t = await tokenWith('path "auth/token/create*" { capabilities = ["update"] }\npath "auth/token/create/*" { capabilities = ["update"] }', { num_uses: 5 });
    const r = await s.api('POST', path, body, { token: t });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toMatch(/limited use count/);
  });
});
