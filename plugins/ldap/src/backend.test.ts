/**
 * The engine in-process over in-memory storage, for what needs no directory:
 * configuration rules, role validation and the OpenAPI surface. Everything
 * that talks to a directory is tested on a real slapd (test/ldap/).
 */
import { StrongroomError } from '@strongroom/sdk-plugin';
import { createTestBackend } from '@strongroom/sdk-plugin/testing';
import { createLdapBackend } from './backend.js';

const rejects = async (p: Promise<unknown>): Promise<StrongroomError> => {
  const err = await p.then(
    () => new Error('resolved'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StrongroomError);
  return err as StrongroomError;
};

const setup = () => createTestBackend(createLdapBackend({ rotationTimer: false }), { system: { maxLeaseTtl: async () => 86400 } });

describe('config', () => {
  test('defaults, every field round trips, and bindpass and client_tls_key are never read back', async () => {
    const t = await setup();
    await t.write('config', { binddn: 'cn=m,dc=x', bindpass: 'secret-pw', userdn: 'ou=u,dc=x' });
    const r = await t.read('config');
    expect(r?.data).toEqual({
      binddn: 'cn=m,dc=x',
      url: 'ldap://127.0.0.1',
      schema: 'openldap',
      userdn: 'ou=u,dc=x',
      userattr: 'cn',
      upndomain: '',
      connection_timeout: 30,
      request_timeout: 90,
      starttls: false,
      insecure_tls: false,
      certificate: '',
      client_tls_cert: '',
      tls_min_version: 'tls12',
      tls_max_version: 'tls12',
      length: 64,
      password_policy: '',
      case_sensitive_names: false,
    });
    expect(JSON.stringify(r)).not.toContain('secret-pw');
    // An update keeps what it does not send; the schema's default search attribute follows the schema.
    await t.write('config', { schema: 'ad', url: 'ldaps://a.example:636,ldap://b.example', connection_timeout: '1m', starttls: 'true' });
    expect((await t.read('config'))?.data).toMatchObject({ binddn: 'cn=m,dc=x', schema: 'ad', userattr: 'userPrincipalName', url: 'ldaps://a.example:636,ldap://b.example', connection_timeout: 60, starttls: true });
    await t.write('config', { schema: 'racf' });
    expect((await t.read('config'))?.data?.userattr).toBe('racfid');
  });

  test('length and password_policy exclude each other; either replaces the other on an update', async () => {
    const t = await setup();
    const both = await rejects(t.write('config', { binddn: 'cn=m', bindpass: 'p', length: 20, password_policy: 'pol' }));
    expect([both.status, both.message]).toEqual([400, 'length: cannot be set together with password_policy']);
    // The policy need not exist yet.
    await t.write('config', { binddn: 'cn=m', bindpass: 'p', password_policy: 'not-yet' });
    expect((await t.read('config'))?.data).toMatchObject({ password_policy: 'not-yet', length: 0 });
    await t.write('config', { length: 12 });
    expect((await t.read('config'))?.data).toMatchObject({ password_policy: '', length: 12 });
  });

  test.each([
    [{}, 'binddn'],
    [{ binddn: 'cn=m' }, 'bindpass'],
    [{ binddn: 'cn=m', bindpass: 'p', url: 'ldap://a,,ldap://b' }, 'url'],
    [{ binddn: 'cn=m', bindpass: 'p', client_tls_key: 'nope' }, 'client_tls_key'],
    [{ binddn: 'cn=m', bindpass: 'p', tls_min_version: 'tls13', tls_max_version: 'tls12' }, 'tls_min_version'],
    [{ binddn: 'cn=m', bindpass: 'p', insecure_tls: 'maybe' }, 'insecure_tls'],
  ])('%j is a 400 naming %s', async (body, field) => {
    const t = await setup();
    const err = await rejects(t.write('config', body));
    expect(err.status).toBe(400);
    expect(err.message).toContain(field);
    expect(await t.read('config')).toBeNull();
  });

  test('paths that need the directory say it is not configured', async () => {
    const t = await setup();
    await t.write('role/r', { creation_ldif: 'dn: cn={{.Username}},ou=d\nobjectClass: top\n', deletion_ldif: 'dn: cn={{.Username}},ou=d\nchangetype: delete\n' });
    const err = await rejects(t.read('creds/r'));
    expect([err.status, err.message]).toEqual([400, 'the directory is not configured (write config first)']);
    expect((await rejects(t.write('rotate-root', {}))).status).toBe(400);
  });
});

describe('dynamic roles', () => {
  test('max_ttl may not exceed the mount maximum, default_ttl not max_ttl', async () => {
    const t = await setup();
    const base = { creation_ldif: 'dn: cn=a\nobjectClass: top\n', deletion_ldif: 'dn: cn=a\nchangetype: delete\n' };
    expect((await rejects(t.write('role/r', { ...base, max_ttl: '48h' }))).message).toContain('max_ttl');
    expect((await rejects(t.write('role/r', { ...base, default_ttl: '2h', max_ttl: '1h' }))).message).toContain('default_ttl');
    await t.write('role/r', { ...base, default_ttl: '1h' });
    expect((await t.read('role/r'))?.data).toEqual({ ...base, rollback_ldif: '', username_template: '', default_ttl: 3600, max_ttl: 0 });
  });
});

describe('library and static roles', () => {
  test('refuse bad input before touching the directory', async () => {
    const t = await setup();
    expect((await rejects(t.write('library/s', {}))).message).toContain('service_account_names');
    expect((await rejects(t.write('library/s', { service_account_names: 'a', ttl: '2h', max_ttl: '1h' }))).message).toContain('ttl');
    expect((await rejects(t.write('static-role/r', { username: 'a' }))).message).toContain('rotation_period');
    expect((await rejects(t.write('static-role/r', { username: 'a', rotation_period: '4s' }))).message).toBe('rotation_period: must be at least 5 seconds');
    expect((await rejects(t.write('static-role/r', { rotation_period: '1h' }))).message).toContain('username');
  });
});

test('OpenAPI: every path of the spec is declared', async () => {
  const t = await setup();
  const patterns = t.backend.describe().paths.map((p) => p.pattern);
  expect(patterns).toEqual([
    'config',
    'rotate-root',
    'static-role',
    'static-role/:role_name',
    'static-cred/:role_name',
    'rotate-role/:role_name',
    'role',
    'role/:role_name',
    'creds/:role_name',
    'library',
    'library/manage/:set_name/check-in',
    'library/:set_name/status',
    'library/:set_name/check-out',
    'library/:set_name/check-in',
    'library/:set_name',
  ]);
  const config = t.backend.describe().paths.find((p) => p.pattern === 'config')!;
  expect(config.fields.filter((f) => f.sensitive).map((f) => f.name)).toEqual(['bindpass', 'client_tls_key']);
});
