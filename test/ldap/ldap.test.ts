/**
 * The LDAP engine end to end on a real OpenLDAP: the real binary, the ldap
 * plugin process and a private slapd. Every password the engine issues or
 * rotates binds, and the one before it stops binding; a failing creation LDIF
 * is rolled back; revocation deletes the entries; library accounts go to one
 * borrower at a time; rotate-root leaves only the engine knowing the bind
 * password. The engine binds as an entry of this file's own (under
 * ou=services, which the directory's ACL lets manage entries), so rotating
 * its password touches no other test file.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { subscribeSse } from '../helpers/events';
import { addPerson, binds, entriesWithCnPrefix, exists, ldapPassword, removeEntries, sharedSlapd, tag, type Slapd } from '../helpers/ldap';
import { sleep, waitFor } from '../helpers/processes';
import { scratchDir, startDevServer, type RunningServer } from '../helpers/server';

jest.setTimeout(90_000);

let s: RunningServer;
let ld: Slapd;
const t = tag();
const bindPassword = ldapPassword();
let bindDn = '';
let users = '';
let dynamic = '';
const made: string[] = [];
const seen: string[] = [];
const dataDir = scratchDir('sr-ldap-');

const CREATE = (ou: string) => `dn: cn={{.Username}},${ou}
objectClass: inetOrgPerson
cn: {{.Username}}
sn: {{ .RoleName | uppercase }}
description: issued {{.IssueTimeSeconds}} until {{.ExpirationTimeSeconds}} ({{.ExpirationTime}})
userPassword: {{.Password}}

dn: cn={{.Username}}-grp,${ou}
changetype: add
objectClass: groupOfNames
cn: {{.Username}}-grp
member: cn={{.Username}},${ou}
`;
const DELETE = (ou: string) => `dn: cn={{.Username}}-grp,${ou}
changetype: delete

dn: cn={{.Username}},${ou}
changetype: delete
`;

async function token(policy: string): Promise<string> {
  const r = await s.api('POST', 'auth/token/create', { policies: [policy], ttl: '1h' });
  expect(r.status).toBe(200);
  return r.body.auth.client_token as string;
}

/** Every file under the server's data directory, as raw bytes joined (what storage holds on disk). */
function storageBytes(): Buffer {
  const parts: Buffer[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile()) parts.push(readFileSync(p));
    }
  };
  walk(dataDir);
  return Buffer.concat(parts);
}

beforeAll(async () => {
  ld = sharedSlapd();
  users = `ou=users,${ld.base}`;
  dynamic = `ou=dynamic,${ld.base}`;
  bindDn = await addPerson(ld, `ou=services,${ld.base}`, `engine-${t}`, bindPassword);
  made.push(bindDn);
  for (const u of ['st', 'lib1', 'lib2', 'lib3', 'solo']) made.push(await addPerson(ld, users, `${u}-${t}`, `${u}-initial`));
  s = await startDevServer({ dataDir });
  expect((await s.api('POST', 'sys/mounts/ldap', { type: 'ldap' })).status).toBe(204);
  // The first URL refuses connections: the engine goes on to the next one.
  const cfg = await s.api('POST', 'ldap/config', { binddn: bindDn, bindpass: bindPassword, url: `ldap://127.0.0.1:1,${ld.url}`, userdn: users, connection_timeout: 5, request_timeout: '20s' });
  expect([cfg.status, cfg.text]).toEqual([204, '']);
  await s.api('PUT', 'sys/policies/acl/borrower', { policy: 'path "ldap/library/*" { capabilities = ["read", "update"] }' });
});

afterAll(async () => {
  await s?.stop();
  if (ld) {
    await removeEntries(ld, await entriesWithCnPrefix(ld, dynamic, `v_`).then((dns) => dns.filter((d) => d.includes(t))));
    await removeEntries(ld, made);
  }
});

describe('config', () => {
  it('reads back the fields the spec lists, with defaults, and never the bind password', async () => {
    const r = await s.api('GET', 'ldap/config');
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({
      binddn: bindDn,
      url: `ldap://127.0.0.1:1,${ld.url}`,
      schema: 'openldap',
      userdn: users,
      userattr: 'cn',
      connection_timeout: 5,
      request_timeout: 20,
      starttls: false,
      insecure_tls: false,
      certificate: '',
      length: 64,
      case_sensitive_names: false,
      tls_min_version: 'tls12',
      tls_max_version: 'tls12',
    });
    expect(r.text).not.toContain(bindPassword);
    expect(r.body.data).not.toHaveProperty('bindpass');
  });

  it.each([
    [{ length: 20, password_policy: 'p' }, 'length'],
    [{ schema: 'novell' }, 'schema'],
    [{ url: 'http://127.0.0.1' }, 'url'],
    [{ certificate: 'not a pem' }, 'certificate'],
    [{ connection_timeout: 'soon' }, 'connection_timeout'],
    [{ length: 2 }, 'length'],
  ])('refuses %j with a 400 naming the field', async (body, field) => {
    const r = await s.api('POST', 'ldap/config', body);
    expect(r.status).toBe(400);
    expect(r.body.errors.join(' ')).toContain(field);
    // Nothing was lost: the engine still binds with the configuration it had.
    expect((await s.api('GET', 'ldap/config')).body.data.url).toBe(`ldap://127.0.0.1:1,${ld.url}`);
  });

  it('a configuration without binddn or bindpass is refused', async () => {
    const m = await s.api('POST', 'sys/mounts/ldap-empty', { type: 'ldap' });
    expect(m.status).toBe(204);
    const r = await s.api('POST', 'ldap-empty/config', { binddn: 'cn=x' });
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toContain('bindpass');
  });
});

describe('static roles', () => {
  it('rotate at creation, when due and on rotate-role: each new password binds, the one before does not', async () => {
    const dn = `cn=st-${t},${users}`;
    const events = await subscribeSse(s.url, 'ldap/*', { token: s.rootToken });
    expect((await s.api('POST', 'ldap/static-role/svc', { username: `st-${t}`, rotation_period: 4 })).status).toBe(400);
    const created = await s.api('POST', 'ldap/static-role/svc', { username: `st-${t}`, rotation_period: '5s' });
    expect([created.status, created.text]).toEqual([204, '']);
    expect(await binds(ld, dn, 'st-initial')).toBe(false);
    const first = (await s.api('GET', 'ldap/static-cred/svc')).body.data;
    seen.push(first.password);
    expect(first).toMatchObject({ dn, username: `st-${t}`, rotation_period: 5, last_password: '' });
    expect(first.ttl).toBeGreaterThanOrEqual(3);
    expect(first.ttl).toBeLessThanOrEqual(5);
    expect(first.password).toHaveLength(64);
    expect(await binds(ld, dn, first.password)).toBe(true);

    const role = (await s.api('GET', 'ldap/static-role/svc')).body.data;
    expect(role).toEqual({ dn, username: `st-${t}`, rotation_period: 5, last_service_rotation: first.last_service_rotation });
    expect((await s.api('GET', 'ldap/static-role')).body.data.keys).toEqual(['svc']);
    expect((await s.api('LIST', 'ldap/static-role')).body.data.keys).toEqual(['svc']);

    // Due after 5 s: the engine rotates it unasked.
    const second = await waitFor('the periodic rotation', async () => {
      const c = (await s.api('GET', 'ldap/static-cred/svc')).body.data;
      return c.password !== first.password ? c : undefined;
    });
    seen.push(second.password);
    expect(second.last_password).toBe(first.password);
    expect(await binds(ld, dn, second.password)).toBe(true);
    expect(await binds(ld, dn, first.password)).toBe(false);

    expect((await s.api('POST', 'ldap/rotate-role/svc', {})).status).toBe(204);
    const third = (await s.api('GET', 'ldap/static-cred/svc')).body.data;
    seen.push(third.password);
    // Each rotation is a change event (ldap/static-rotate), without the password.
    await waitFor('three static-rotate events', () => events.events().length >= 3);
    expect(events.events().slice(0, 3)).toEqual(Array(3).fill(expect.objectContaining({ event_type: 'ldap/static-rotate', mount: 'ldap/', path: 'ldap/static-cred/svc', metadata: { role: 'svc' } })));
    expect(JSON.stringify(events.frames)).not.toContain(third.password);
    events.close();
    expect(third.password).not.toBe(second.password);
    expect(await binds(ld, dn, third.password)).toBe(true);
    expect(await binds(ld, dn, second.password)).toBe(false);

    // A long period, so no rotation races what follows; username and dn cannot change.
    expect((await s.api('POST', 'ldap/static-role/svc', { rotation_period: '1h' })).status).toBe(204);
    const ch = await s.api('POST', 'ldap/static-role/svc', { username: 'someone-else' });
    expect(ch.status).toBe(400);
    expect(ch.body.errors[0]).toContain('username');
    expect((await s.api('GET', 'ldap/static-cred/svc')).body.data.ttl).toBeGreaterThan(3500);
  });

  it('refuses a role whose entry does not exist, and unknown ones read as 404', async () => {
    const r = await s.api('POST', 'ldap/static-role/ghost', { username: `nobody-${t}`, rotation_period: '1h' });
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toContain(`nobody-${t}`);
    const d = await s.api('POST', 'ldap/static-role/ghost', { dn: `cn=nobody-${t},${users}`, username: 'x', rotation_period: '1h' });
    expect(d.status).toBe(400);
    expect(d.body.errors[0]).toContain('dn');
    expect((await s.api('GET', 'ldap/static-cred/ghost')).status).toBe(404);
    expect((await s.api('POST', 'ldap/rotate-role/ghost', {})).status).toBe(404);
  });

  it('deleting a role leaves the entry and its password', async () => {
    await s.api('POST', 'ldap/static-role/solo', { dn: `cn=solo-${t},${users}`, username: `solo-${t}`, rotation_period: '1h' });
    const pw = (await s.api('GET', 'ldap/static-cred/solo')).body.data.password;
    expect((await s.api('DELETE', 'ldap/static-role/solo')).status).toBe(204);
    expect((await s.api('GET', 'ldap/static-role/solo')).status).toBe(404);
    expect(await binds(ld, `cn=solo-${t},${users}`, pw)).toBe(true);
  });
});

describe('dynamic roles', () => {
  it('issue entries that bind as a lease and revocation deletes them', async () => {
    const w = await s.api('POST', 'ldap/role/dyn', {
      // Base64 input is accepted and read back decoded.
      creation_ldif: Buffer.from(CREATE(dynamic)).toString('base64'),
      deletion_ldif: DELETE(dynamic),
      rollback_ldif: DELETE(dynamic),
      username_template: `v_{{.RoleName}}_${t}_{{random 8 | lowercase}}`,
      default_ttl: '10m',
      max_ttl: '1h',
    });
    expect([w.status, w.text]).toEqual([204, '']);
    const role = (await s.api('GET', 'ldap/role/dyn')).body.data;
    expect(role).toMatchObject({ creation_ldif: CREATE(dynamic), deletion_ldif: DELETE(dynamic), default_ttl: 600, max_ttl: 3600 });

    const issued = await s.api('GET', 'ldap/creds/dyn');
    expect(issued.status).toBe(200);
    expect(issued.body).toMatchObject({ renewable: true, lease_duration: 600 });
    const { username, password, distinguished_names } = issued.body.data as { username: string; password: string; distinguished_names: string[] };
    seen.push(password);
    expect(username).toMatch(new RegExp(`^v_dyn_${t}_[a-z0-9]{8}$`));
    expect(distinguished_names).toEqual([`cn=${username},${dynamic}`, `cn=${username}-grp,${dynamic}`]);
    expect(await binds(ld, distinguished_names[0]!, password)).toBe(true);
    expect(await binds(ld, distinguished_names[0]!, `${password}x`)).toBe(false);

    const renewed = await s.api('POST', 'sys/leases/renew', { lease_id: issued.body.lease_id, increment: 1200 });
    expect([renewed.status, renewed.body.lease_duration]).toEqual([200, 1200]);

    expect((await s.api('POST', 'sys/leases/revoke', { lease_id: issued.body.lease_id, sync: true })).status).toBe(204);
    for (const dn of distinguished_names) expect(await exists(ld, dn)).toBe(false);
    expect(await binds(ld, distinguished_names[0]!, password).catch(() => false)).toBe(false);
  });

  it('the default username template: v_<display name>_<role>_<10 random>_<unix time>', async () => {
    expect((await s.api('POST', 'ldap/role/plain', { creation_ldif: CREATE(dynamic), deletion_ldif: DELETE(dynamic) })).status).toBe(204);
    const before = Math.floor(Date.now() / 1000);
    const r = await s.api('GET', 'ldap/creds/plain');
    expect(r.status).toBe(200);
    const m = /^v_([^_]+)_plain_([A-Za-z0-9]{10})_(\d+)$/.exec(r.body.data.username);
    expect(m).not.toBeNull();
    expect(Number(m![3])).toBeGreaterThanOrEqual(before);
    expect((await s.api('POST', 'sys/leases/revoke', { lease_id: r.body.lease_id, sync: true })).status).toBe(204);
    expect(await exists(ld, r.body.data.distinguished_names[0])).toBe(false);
  });

  it('updates only the keys sent; an empty value removes one; LIST role', async () => {
    expect((await s.api('POST', 'ldap/role/dyn', { default_ttl: 120, rollback_ldif: '' })).status).toBe(204);
    const role = (await s.api('GET', 'ldap/role/dyn')).body.data;
    expect(role).toMatchObject({ creation_ldif: CREATE(dynamic), default_ttl: 120, max_ttl: 3600, rollback_ldif: '' });
    expect((await s.api('LIST', 'ldap/role')).body.data.keys).toContain('dyn');
  });

  it('a failing creation LDIF runs the rollback and leaves no entry', async () => {
    const w = await s.api('POST', 'ldap/role/broken', {
      // The second record's parent does not exist: the first record must be rolled back.
      creation_ldif: `${CREATE(dynamic).split('\n\n')[0]}\n\ndn: cn={{.Username}},ou=missing-${t},${ld.base}\nobjectClass: organizationalRole\ncn: {{.Username}}\n`,
      deletion_ldif: DELETE(dynamic),
      rollback_ldif: `dn: cn={{.Username}},${dynamic}\nchangetype: delete\n`,
      username_template: `v_broken_${t}_{{random 6}}`,
    });
    expect(w.status).toBe(204);
    const r = await s.api('GET', 'ldap/creds/broken');
    expect(r.status).toBe(502);
    expect(r.body.errors[0]).toContain('creation LDIF failed');
    expect(await entriesWithCnPrefix(ld, ld.base, `v_broken_${t}`)).toEqual([]);
    // No lease was made for it.
    expect(r.body.lease_id ?? '').toBe('');
  });

  it.each([
    [{ creation_ldif: 'dn: cn=x\nobjectClass: top\n', deletion_ldif: '{{ .Nope }}' }, 'deletion_ldif'],
    [{ creation_ldif: 'no colon here', deletion_ldif: 'dn: cn=x\nchangetype: delete\n' }, 'creation_ldif'],
    [{ creation_ldif: 'dn: cn=x\nobjectClass: top\n' }, 'deletion_ldif'],
    [{ creation_ldif: 'dn: cn={{ .Username | nope }}\nobjectClass: top\n', deletion_ldif: 'dn: cn=x\nchangetype: delete\n' }, 'creation_ldif'],
    [{ creation_ldif: 'dn: cn=x\nobjectClass: top\n', deletion_ldif: 'dn: cn=x\nchangetype: delete\n', username_template: '{{ unknown }}' }, 'username_template'],
  ])('refuses role %j with a 400 naming the field', async (body, field) => {
    const r = await s.api('POST', `ldap/role/bad-${field}`, body);
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toContain(field);
  });
});

describe('library sets', () => {
  const lib = (n: string) => `${n}-${t}`;
  const dnOf = (n: string) => `cn=${lib(n)},${users}`;

  it('sets every account password at creation; check-out lends one, check-in rotates it', async () => {
    const w = await s.api('POST', 'ldap/library/team', { service_account_names: [lib('lib1'), lib('lib2')], ttl: '10m', max_ttl: '1h' });
    expect([w.status, w.text]).toEqual([204, '']);
    expect(await binds(ld, dnOf('lib1'), 'lib1-initial')).toBe(false);
    expect(await binds(ld, dnOf('lib2'), 'lib2-initial')).toBe(false);
    expect((await s.api('GET', 'ldap/library/team')).body.data).toEqual({ service_account_names: [lib('lib1'), lib('lib2')], ttl: 600, max_ttl: 3600, disable_check_in_enforcement: false });
    expect((await s.api('LIST', 'ldap/library')).body.data.keys).toEqual(['team']);

    const a = await token('borrower');
    const b = await token('borrower');
    // A longer ttl than the set's is capped to it.
    const out = await s.api('POST', 'ldap/library/team/check-out', { ttl: '5h' }, { token: a });
    expect(out.status).toBe(200);
    expect(out.body).toMatchObject({ renewable: true, lease_duration: 600 });
    const { service_account_name: name, password } = out.body.data as { service_account_name: string; password: string };
    seen.push(password);
    expect(name).toBe(lib('lib1'));
    expect(await binds(ld, dnOf('lib1'), password)).toBe(true);

    const status = (await s.api('GET', 'ldap/library/team/status')).body.data;
    expect(status[lib('lib2')]).toEqual({ available: true });
    expect(status[lib('lib1')]).toMatchObject({ available: false, borrower_entity_id: '' });
    expect(status[lib('lib1')].borrower_client_token).toBeTruthy();
    expect(status[lib('lib1')].borrower_client_token).not.toBe(a);

    // Somebody else may not check it in.
    const other = await s.api('POST', 'ldap/library/team/check-in', { service_account_names: lib('lib1') }, { token: b });
    expect(other.status).toBe(403);
    expect((await s.api('GET', 'ldap/library/team/status')).body.data[lib('lib1')].available).toBe(false);

    // The borrower may, naming no account (it has only one out).
    const back = await s.api('POST', 'ldap/library/team/check-in', {}, { token: a });
    expect([back.status, back.body.data]).toEqual([200, { check_ins: [lib('lib1')] }]);
    expect(await binds(ld, dnOf('lib1'), password)).toBe(false);

    // Checking in an available account succeeds and lists nothing.
    const again = await s.api('POST', 'ldap/library/team/check-in', { service_account_names: [lib('lib1')] }, { token: a });
    expect([again.status, again.body.data]).toEqual([200, { check_ins: [] }]);

    // The next borrower gets the account's new password, which binds.
    const next = await s.api('POST', 'ldap/library/team/check-out', {}, { token: b });
    expect(next.body.data.service_account_name).toBe(lib('lib1'));
    expect(next.body.data.password).not.toBe(password);
    expect(await binds(ld, dnOf('lib1'), next.body.data.password)).toBe(true);
    // The manage path forces it back.
    const forced = await s.api('POST', 'ldap/library/manage/team/check-in', { service_account_names: [lib('lib1')] });
    expect(forced.body.data).toEqual({ check_ins: [lib('lib1')] });
    expect(await binds(ld, dnOf('lib1'), next.body.data.password)).toBe(false);
  });

  it('a check-out is a renewable lease, capped by the ttl and max_ttl of the set', async () => {
    const out = await s.api('POST', 'ldap/library/team/check-out', { ttl: '1m' });
    expect([out.status, out.body.lease_duration]).toEqual([200, 60]);
    const renewed = await s.api('POST', 'sys/leases/renew', { lease_id: out.body.lease_id, increment: '3h' });
    expect([renewed.status, renewed.body.lease_duration]).toEqual([200, 600]);
    await s.api('POST', 'ldap/library/manage/team/check-in', { service_account_names: out.body.data.service_account_name });
    // Checked in by hand: the lease no longer holds the account.
    expect((await s.api('POST', 'sys/leases/renew', { lease_id: out.body.lease_id })).status).toBe(400);
    expect((await s.api('POST', 'sys/leases/revoke', { lease_id: out.body.lease_id, sync: true })).status).toBe(204);
  });

  it('an account is checked in when its lease is revoked', async () => {
    const out = await s.api('POST', 'ldap/library/team/check-out', {});
    const name = out.body.data.service_account_name as string;
    expect((await s.api('GET', 'ldap/library/team/status')).body.data[name].available).toBe(false);
    expect((await s.api('POST', 'sys/leases/revoke', { lease_id: out.body.lease_id, sync: true })).status).toBe(204);
    expect((await s.api('GET', 'ldap/library/team/status')).body.data[name]).toEqual({ available: true });
    expect(await binds(ld, `cn=${name},${users}`, out.body.data.password)).toBe(false);
  });

  it('two tokens racing for the last free account: exactly one gets it, the other a 400', async () => {
    expect((await s.api('POST', 'ldap/library/last', { service_account_names: lib('lib3') })).status).toBe(204);
    const [a, b] = [await token('borrower'), await token('borrower')];
    const results = await Promise.all([a, b].map((tk) => s.api('POST', 'ldap/library/last/check-out', {}, { token: tk })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
    const loser = results.find((r) => r.status === 400)!;
    expect(loser.body.errors[0]).toMatch(/no account .* available/);
    const winner = results.find((r) => r.status === 200)!;
    expect(await binds(ld, dnOf('lib3'), winner.body.data.password)).toBe(true);
  });

  it('refuses accounts that do not exist or already belong to another set', async () => {
    const r = await s.api('POST', 'ldap/library/nope', { service_account_names: [`ghost-${t}`] });
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toContain(`ghost-${t}`);
    const dup = await s.api('POST', 'ldap/library/dup', { service_account_names: [lib('lib2')] });
    expect(dup.status).toBe(400);
    expect(dup.body.errors[0]).toContain('already belongs to set team');
    expect((await s.api('POST', 'ldap/library/x/check-out', {})).status).toBe(400);
  });
});

describe('TLS and connections', () => {
  const pem = (name: string) => readFileSync(join(ld.tlsDir, name), 'utf8');
  /** Writes the TLS mount's config and issues (then revokes) one credential through it: the status of creds. */
  async function issueOver(cfg: Record<string, unknown>): Promise<{ status: number; error: string }> {
    const w = await s.api('POST', 'ldap-tls/config', { binddn: ld.managerDn, bindpass: ld.managerPassword, connection_timeout: 5, request_timeout: 10, certificate: '', insecure_tls: false, starttls: false, client_tls_cert: '', client_tls_key: '', ...cfg });
    expect([w.status, w.text]).toEqual([204, '']);
    const r = await s.api('GET', 'ldap-tls/creds/dyn');
    if (r.status === 200) {
      expect(await binds(ld, r.body.data.distinguished_names[0], r.body.data.password)).toBe(true);
      expect((await s.api('POST', 'sys/leases/revoke', { lease_id: r.body.lease_id, sync: true })).status).toBe(204);
    }
    return { status: r.status, error: String(r.body?.errors?.[0] ?? '') };
  }

  beforeAll(async () => {
    expect((await s.api('POST', 'sys/mounts/ldap-tls', { type: 'ldap' })).status).toBe(204);
    await s.api('POST', 'ldap-tls/config', { binddn: ld.managerDn, bindpass: ld.managerPassword, url: ld.ldapsUrl });
    const role = await s.api('POST', 'ldap-tls/role/dyn', { creation_ldif: CREATE(dynamic), deletion_ldif: DELETE(dynamic), username_template: `v_tls_${t}_{{random 8}}` });
    expect(role.status).toBe(204);
  });

  it('ldaps:// verifies the server against `certificate`; without it the connection is refused, insecure_tls skips the check', async () => {
    expect(await issueOver({ url: ld.ldapsUrl, certificate: pem('ca.pem') })).toEqual({ status: 200, error: '' });
    const refused = await issueOver({ url: ld.ldapsUrl });
    expect(refused.status).toBe(502);
    expect(refused.error).toMatch(/certificate/);
    expect(await issueOver({ url: ld.ldapsUrl, insecure_tls: true })).toEqual({ status: 200, error: '' });
  });

  it('starttls upgrades an ldap:// connection, checked against the same CA', async () => {
    expect(await issueOver({ url: ld.url, starttls: true, certificate: pem('ca.pem') })).toEqual({ status: 200, error: '' });
    expect((await issueOver({ url: ld.url, starttls: true })).status).toBe(502);
  });

  it('client_tls_cert and client_tls_key are presented: one the server cannot verify ends the session', async () => {
    expect(await issueOver({ url: ld.ldapsUrl, certificate: pem('ca.pem'), client_tls_cert: pem('client.pem'), client_tls_key: pem('client-key.pem') })).toEqual({ status: 200, error: '' });
    expect((await issueOver({ url: ld.ldapsUrl, certificate: pem('ca.pem'), client_tls_cert: pem('rogue.pem'), client_tls_key: pem('rogue-key.pem') })).status).toBe(502);
  });

  it('a server that accepts but never answers is passed over after connection_timeout', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((sock) => void sockets.add(sock));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (silent.address() as AddressInfo).port;
      const t0 = Date.now();
      expect(await issueOver({ url: `ldap://127.0.0.1:${port},${ld.url}`, connection_timeout: 1 })).toEqual({ status: 200, error: '' });
      expect(sockets.size).toBeGreaterThan(0);
      // Well before request_timeout (10 s here), which is what a bind to it would otherwise wait.
      expect(Date.now() - t0).toBeLessThan(8_000);
    } finally {
      for (const sock of sockets) sock.destroy();
      await new Promise((r) => silent.close(r));
    }
  });

  it('a connection the server closed is replaced, bound, on the next credential', async () => {
    // A proxy in front of slapd stands for its side of the connection: closing every socket it holds is the
    // server dropping the engine's bound connection (an idle timeout, a restart) between two requests.
    const upstream = new URL(ld.url);
    const held = new Set<Socket>();
    const proxy = createServer((client) => {
      const server = connect(Number(upstream.port), upstream.hostname);
      for (const sock of [client, server]) {
        held.add(sock);
        sock.on('error', () => undefined);
        sock.on('close', () => {
          held.delete(sock);
          client.destroy();
          server.destroy();
        });
      }
      client.pipe(server).pipe(client);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    try {
      expect(await issueOver({ url: `ldap://127.0.0.1:${(proxy.address() as AddressInfo).port}` })).toEqual({ status: 200, error: '' });
      for (const sock of held) sock.destroy();
      await waitFor('the proxy to drop its sockets', () => held.size === 0, 5_000);
      // Time for the plugin to read the close (a request racing it would fail on the dying socket).
      await sleep(300);
      const r = await s.api('GET', 'ldap-tls/creds/dyn');
      expect([r.status, r.body?.errors]).toEqual([200, undefined]);
      expect(await binds(ld, r.body.data.distinguished_names[0], r.body.data.password)).toBe(true);
      expect((await s.api('POST', 'sys/leases/revoke', { lease_id: r.body.lease_id, sync: true })).status).toBe(204);
    } finally {
      for (const sock of held) sock.destroy();
      await new Promise((r) => proxy.close(r));
    }
  });

  it('a new bind password in the config is the one used: the open connection is not kept', async () => {
    expect(await issueOver({ url: ld.url })).toEqual({ status: 200, error: '' });
    const wrong = ldapPassword();
    const refused = await issueOver({ url: ld.url, bindpass: wrong });
    expect(refused.status).toBe(502);
    expect(refused.error).not.toContain(wrong);
    expect(await issueOver({ url: ld.url })).toEqual({ status: 200, error: '' });
  });

  it('tls_min_version and tls_max_version bound the protocol', async () => {
    expect(await issueOver({ url: ld.ldapsUrl, certificate: pem('ca.pem'), tls_min_version: 'tls13', tls_max_version: 'tls13' })).toEqual({ status: 200, error: '' });
  });
});

describe('rotate-root', () => {
  it('changes the bind password: the old one stops binding and the engine keeps working', async () => {
    expect(await binds(ld, bindDn, bindPassword)).toBe(true);
    const r = await s.api('POST', 'ldap/rotate-root', {});
    expect([r.status, r.text]).toEqual([204, '']);
    expect(await binds(ld, bindDn, bindPassword)).toBe(false);
    const cfg = await s.api('GET', 'ldap/config');
    expect(cfg.body.data.last_bind_password_rotation).toBeTruthy();
    // Still working: a dynamic credential and a rotation, on connections bound with the new password.
    const issued = await s.api('GET', 'ldap/creds/dyn');
    expect(issued.status).toBe(200);
    seen.push(issued.body.data.password);
    expect(await binds(ld, issued.body.data.distinguished_names[0], issued.body.data.password)).toBe(true);
    expect((await s.api('POST', 'ldap/rotate-role/svc', {})).status).toBe(204);
    const now = (await s.api('GET', 'ldap/static-cred/svc')).body.data.password;
    seen.push(now);
    expect(await binds(ld, `cn=st-${t},${users}`, now)).toBe(true);
    // A second rotation works from the first one's password.
    expect((await s.api('POST', 'ldap/rotate-root', {})).status).toBe(204);
    expect((await s.api('GET', 'ldap/creds/dyn')).status).toBe(200);
  });
});

describe('secrecy', () => {
  it('no password the engine handled is in storage or in the server log in plain text', async () => {
    await sleep(200);
    const disk = storageBytes();
    const log = s.output();
    expect(seen.length).toBeGreaterThan(5);
    for (const pw of [...seen, bindPassword]) {
      expect(disk.includes(pw)).toBe(false);
      expect(log.includes(pw)).toBe(false);
    }
  });
});
