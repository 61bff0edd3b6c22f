import { createHmac } from 'node:crypto';
import sshpk from 'sshpk';
import { type LogicalResponse, StrongroomError } from '@strongroom/sdk-plugin';
import { createMemoryStorage, createTestBackend, type TestBackend, toOpenApi } from '@strongroom/sdk-plugin/testing';
import { createSshBackend } from './backend.js';
import { caKeySpec, generateKey, issueKeySpec } from './crypto/keys.js';

async function errOf(p: Promise<unknown>): Promise<StrongroomError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof StrongroomError) return e;
    throw e;
  }
  throw new Error('expected an error');
}

interface CertView {
  keyId: string;
  principals: string[];
  type: string;
  validFrom: number;
  validUntil: number;
  exts: Record<string, boolean>;
}

function certOf(res: LogicalResponse | null): CertView {
  const line = String(res?.data?.signed_key);
  const cert = sshpk.parseCertificate(line, 'openssh');
  const sig = (cert as unknown as { signatures: { openssh: { keyId: string; exts: { name: string; critical: boolean }[] } } }).signatures.openssh;
  return {
    keyId: sig.keyId,
    principals: cert.subjects.map((s) => s.uid ?? s.hostname ?? ''),
    type: cert.subjects[0]?.type ?? '',
    validFrom: cert.validFrom.getTime() / 1000,
    validUntil: cert.validUntil.getTime() / 1000,
    exts: Object.fromEntries(sig.exts.map((e) => [e.name, e.critical])),
  };
}

describe('ssh engine (in-process)', () => {
  let b: TestBackend;
  let userKey: string;
  beforeAll(async () => {
    userKey = (await generateKey(issueKeySpec('ed25519', 0))).publicKey;
  });
  beforeEach(async () => {
    b = await createTestBackend(createSshBackend(), { mount: { path: 'ssh/', type: 'ssh' }, system: { defaultLeaseTtl: async () => 3600, maxLeaseTtl: async () => 7200 } });
  });

  test('issuers: the first is the default, config/ca replaces the default, delete leaves none', async () => {
    expect((await errOf(b.read('config/ca'))).message).toMatch(/no default issuer/);
    const first = await b.write('issuers/import/first', { key_type: 'ed25519' });
    const id1 = String(first?.data?.issuer_id);
    expect(first?.data?.issuer_name).toBe('first');
    expect((await b.read('config/issuers'))?.data?.default).toBe(id1);
    const second = await b.write('issuers/import/second', { key_type: 'ec', key_bits: 384 });
    expect((await b.read('config/issuers'))?.data?.default).toBe(id1);
    const viaCa = await b.write('config/ca', { key_type: 'ssh-ed25519' });
    expect((await b.read('config/ca'))?.data?.issuer_id).toBe(viaCa?.data?.issuer_id);
    const list = await b.list('issuers');
    expect((list?.data?.keys as string[]).length).toBe(3);
    const info = list?.data?.key_info as Record<string, { issuer_name: string; is_default: boolean; public_key: string }>;
    expect(info[id1]).toMatchObject({ issuer_name: 'first', is_default: false });
    expect(info[String(viaCa?.data?.issuer_id)]?.is_default).toBe(true);
    // Names: unique, not "default"; rename by POST and PATCH.
    expect((await errOf(b.write('issuers/import/first', { key_type: 'ed25519' }))).message).toContain('issuer_name');
    expect((await errOf(b.write('issuers/import/default', { key_type: 'ed25519' }))).message).toContain('issuer_name');
    expect((await b.write('issuer/second', { issuer_name: 'renamed' }))?.data?.issuer_name).toBe('renamed');
    expect((await b.patch('issuer/renamed', { issuer_name: 'again' }))?.data?.issuer_id).toBe(second?.data?.issuer_id);
    // Public keys as text/plain.
    const raw = await b.read('issuer/again/public_key');
    expect(raw?.raw?.contentType).toBe('text/plain');
    expect(raw?.raw?.body).toBe(second?.data?.public_key);
    expect((await b.read('public_key'))?.raw?.body).toBe(viaCa?.data?.public_key);
    // config/issuers POST, then deleting the default leaves none.
    expect((await b.write('config/issuers', { default: 'first' }))?.data?.default).toBe(id1);
    await b.delete('issuer/default');
    expect((await b.read('config/issuers'))?.data?.default).toBe('');
    expect((await errOf(b.read('public_key'))).message).toMatch(/no default issuer/);
    await b.delete('config/ca');
    expect((await b.list('issuers'))?.data?.keys).toEqual([]);
  });

  test('config/ca: a submitted pair is kept, a mismatched pair refused naming the field', async () => {
    const a = await generateKey(caKeySpec('ed25519', 0));
    const c = await generateKey(caKeySpec('ed25519', 0));
    const ok = await b.write('config/ca', { generate_signing_key: false, private_key: a.privatePkcs8, public_key: a.publicKey });
    expect(ok?.data?.public_key).toBe(`${a.publicKey}\n`);
    expect(JSON.stringify(ok)).not.toContain('PRIVATE KEY');
    expect((await errOf(b.write('config/ca', { generate_signing_key: false, private_key: a.privatePkcs8, public_key: c.publicKey }))).message).toContain('public_key');
    expect((await errOf(b.write('config/ca', { generate_signing_key: false, private_key: a.privatePkcs8 }))).message).toContain('public_key');
    expect((await errOf(b.write('config/ca', { key_type: 'rsa', key_bits: 1024 }))).message).toContain('key_bits');
  });

  test('sign: every role constraint is refused with a 400 naming the field', async () => {
    await b.write('config/ca', { key_type: 'ed25519' });
    await b.write('roles/r', {
      key_type: 'ca',
      allow_user_certificates: true,
      allowed_users: 'alice,bob',
      default_user: 'alice',
      allowed_critical_options: 'force-command',
      allowed_extensions: 'permit-pty',
      default_extensions: { 'permit-agent-forwarding': '' },
      max_ttl: '1h',
      allowed_user_key_lengths: { rsa: [3072] },
    });
    const sign = (extra: Record<string, unknown>) => b.write('sign/r', { public_key: userKey, ...extra });
    const cases: [Record<string, unknown>, string][] = [
      [{ valid_principals: 'mallory' }, 'valid_principals'],
      [{ cert_type: 'host' }, 'cert_type'],
      [{ cert_type: 'nope' }, 'cert_type'],
      [{ key_id: 'mine' }, 'key_id'],
      [{ ttl: '2h' }, 'ttl'],
      [{ critical_options: { 'source-address': '1.2.3.4' } }, 'critical_options'],
      [{ extensions: { 'permit-port-forwarding': '' } }, 'extensions'],
      [{ public_key: 'garbage' }, 'public_key'],
    ];
    for (const [extra, field] of cases) {
      const e = await errOf(sign(extra));
      expect([field, e.status, e.message]).toEqual([field, 400, expect.stringContaining(`"${field}"`)]);
    }
    // A role with key-length rules refuses other key types.
    await b.write('roles/lengths', { key_type: 'ca', allow_user_certificates: true, allowed_users: '*', allowed_user_key_lengths: { rsa: 2048 } });
    expect((await errOf(b.write('sign/lengths', { public_key: userKey, valid_principals: 'x' }))).message).toContain('allowed_user_key_lengths');
    const rsa3072 = (await generateKey(issueKeySpec('rsa', 3072))).publicKey;
    expect((await errOf(b.write('sign/lengths', { public_key: rsa3072, valid_principals: 'x' }))).message).toContain('invalid size');
    // No principals without allow_empty_principals.
    await b.write('roles/empty', { key_type: 'ca', allow_user_certificates: true, allowed_users: 'a' });
    expect((await errOf(b.write('sign/empty', { public_key: userKey }))).message).toContain('valid_principals');
    // algorithm_signer needs an RSA CA.
    await b.write('roles/alg', { key_type: 'ca', allow_user_certificates: true, allowed_users: '*', algorithm_signer: 'rsa-sha2-512' });
    expect((await errOf(b.write('sign/alg', { public_key: userKey, valid_principals: 'x' }))).message).toContain('algorithm_signer');
    // Role writes: bad input named.
    expect((await errOf(b.write('roles/bad', { key_type: 'ca' }))).message).toContain('allow_user_certificates');
    expect((await errOf(b.write('roles/bad', { key_type: 'ca', allow_user_certificates: true, algorithm_signer: 'md5' }))).message).toContain('algorithm_signer');
    expect((await errOf(b.write('roles/bad', { key_type: 'ca', allow_user_certificates: true, ttl: '2h', max_ttl: '1h' }))).message).toContain('"ttl"');
    expect((await errOf(b.write('roles/bad', { key_type: 'otp', cidr_list: '10.0.0.0/8' }))).message).toContain('default_user');
    expect((await errOf(b.write('roles/bad', { key_type: 'otp', default_user: 'u', cidr_list: '10.0.0.0/99' }))).message).toContain('cidr_list');
    expect((await errOf(b.write('roles/bad', { key_type: 'dynamic' }))).message).toContain('key_type');
    expect((await errOf(b.write('roles/bad', {}))).message).toContain('key_type');
  });

  test('sign: defaults, allowed choices, key ID format, TTL capping and templates', async () => {
    const ca = await b.write('config/ca', { key_type: 'ed25519' });
    await b.write('roles/r', {
      key_type: 'ca',
      allow_user_certificates: true,
      allowed_users: 'alice,{{identity.entity.aliases.approle_1.metadata.role_name}}',
      allowed_users_template: true,
      default_user: 'alice',
      allowed_extensions: 'permit-pty,permit-X11-forwarding',
      default_extensions: { 'permit-agent-forwarding': '' },
      default_critical_options: { 'force-command': 'true' },
      key_id_format: 'k-{{role_name}}-{{token_display_name}}-{{public_key_hash}}',
      ttl: '30m',
      not_before_duration: 60,
    });
    const before = Math.floor(Date.now() / 1000);
    const res = await b.write('sign/r', { public_key: userKey });
    expect(res?.data?.issuer_id).toBe(ca?.data?.issuer_id);
    expect(String(res?.data?.serial_number)).toMatch(/^[0-9a-f]+$/);
    expect(res?.secret).toBeUndefined();
    let c = certOf(res);
    expect(c.principals).toEqual(['alice']);
    expect(c.keyId).toMatch(/^k-r-root-[0-9a-f]{64}$/);
    expect(c.exts).toEqual({ 'force-command': true, 'permit-agent-forwarding': false });
    expect(c.validUntil - before).toBeGreaterThanOrEqual(1800);
    expect(c.validUntil - before).toBeLessThan(1805);
    expect(before - c.validFrom).toBeGreaterThanOrEqual(59);
    // The caller's extensions replace the defaults; the templated user comes from the login alias the core recorded.
    const alias = { mountAccessor: 'approle_1', name: 'role-id-1', metadata: { role_name: 'web' } };
    const asAppRole = await b.request({ operation: 'update', path: 'sign/r', data: { public_key: userKey, valid_principals: 'web', extensions: { 'permit-pty': '' }, ttl: 600 }, client: { displayName: 'approle', alias } });
    // Never from the token's own meta, which whoever creates the token chooses, nor from an alias on another mount.
    const viaMeta = await errOf(b.request({ operation: 'update', path: 'sign/r', data: { public_key: userKey, valid_principals: 'web' }, client: { metadata: { role_name: 'web' } } }));
    expect(viaMeta.message).toContain('valid_principals');
    expect(viaMeta.message).toContain('has no alias on the auth mount with accessor "approle_1"');
    expect((await errOf(b.request({ operation: 'update', path: 'sign/r', data: { public_key: userKey, valid_principals: 'web' }, client: { alias: { ...alias, mountAccessor: 'approle_2' } } }))).status).toBe(400);
    c = certOf(asAppRole);
    expect(c.principals).toEqual(['web']);
    expect(c.exts).toEqual({ 'force-command': true, 'permit-pty': false });
    // With no TTL anywhere the mount default (3600) is capped by the mount max (7200): 3600.
    await b.write('roles/plain', { key_type: 'ca', allow_user_certificates: true, allowed_users: '*', allow_user_key_ids: true });
    c = certOf(await b.write('sign/plain', { public_key: userKey, valid_principals: 'u1,u2', key_id: 'chosen' }));
    expect(c.keyId).toBe('chosen');
    expect(c.principals).toEqual(['u1', 'u2']);
    expect(Math.round(c.validUntil - Date.now() / 1000)).toBeGreaterThan(3590);
    // "*" also allows a certificate without principals (sshpk shows an empty list as "*").
    expect(certOf(await b.write('sign/plain', { public_key: userKey })).principals).toEqual(['*']);
  });

  test('host certificates: bare domains and subdomains', async () => {
    await b.write('config/ca', { key_type: 'ec' });
    await b.write('roles/h', { key_type: 'ca', allow_host_certificates: true, allowed_domains: 'example.com', allow_subdomains: true });
    const c = certOf(await b.write('sign/h', { public_key: userKey, cert_type: 'host', valid_principals: 'a.example.com,b.example.com' }));
    expect([c.type, c.principals]).toEqual(['host', ['a.example.com', 'b.example.com']]);
    expect((await errOf(b.write('sign/h', { public_key: userKey, cert_type: 'host', valid_principals: 'example.com' }))).message).toContain('valid_principals');
    expect((await errOf(b.write('sign/h', { public_key: userKey, cert_type: 'host', valid_principals: 'a.example.org' }))).message).toContain('valid_principals');
    await b.write('roles/bare', { key_type: 'ca', allow_host_certificates: true, allowed_domains: 'example.com', allow_bare_domains: true });
    expect(certOf(await b.write('sign/bare', { public_key: userKey, cert_type: 'host', valid_principals: 'example.com' })).principals).toEqual(['example.com']);
  });

  test('issue: a key pair and its certificate; nothing stored', async () => {
    await b.write('config/ca', { key_type: 'rsa', key_bits: 2048 });
    await b.write('roles/r', { key_type: 'ca', allow_user_certificates: true, allowed_users: '*', algorithm_signer: 'rsa-sha2-512' });
    const storage = b.storage as ReturnType<typeof createMemoryStorage>;
    const keysBefore = [...storage.dump().keys()].sort();
    for (const [type, bits, pem] of [['ed25519', 0, 'OPENSSH PRIVATE KEY'], ['ec', 384, 'EC PRIVATE KEY'], ['rsa', 2048, 'RSA PRIVATE KEY']] as const) {
      const res = await b.write('issue/r', { key_type: type, key_bits: bits, valid_principals: 'u' });
      expect(String(res?.data?.private_key)).toContain(`BEGIN ${pem}`);
      expect(res?.data?.private_key_type).toBe(type);
      const key = sshpk.parsePrivateKey(String(res?.data?.private_key), 'auto');
      const cert = sshpk.parseCertificate(String(res?.data?.signed_key), 'openssh');
      expect(cert.subjectKey.fingerprint('sha256').toString()).toBe(key.toPublic().fingerprint('sha256').toString());
    }
    expect([...storage.dump().keys()].sort()).toEqual(keysBefore);
    expect((await errOf(b.write('issue/r', { key_type: 'dsa' }))).message).toContain('key_type');
  });

  test('OTP: creds, verify exactly once, lookup, zero-address roles, revoke; the OTP never stored', async () => {
    await b.write('roles/otp', { key_type: 'otp', default_user: 'admin', cidr_list: '10.0.0.0/8', exclude_cidr_list: '10.1.0.0/16', allowed_users: 'ops' });
    expect((await b.read('roles/otp'))?.data).toEqual({ key_type: 'otp', default_user: 'admin', cidr_list: '10.0.0.0/8', exclude_cidr_list: '10.1.0.0/16', port: 22, allowed_users: 'ops' });
    const creds = await b.write('creds/otp', { ip: '10.2.3.4' });
    expect(creds?.secret?.renewable).toBe(false);
    const otp = String(creds?.data?.key);
    expect(creds?.data).toEqual({ key_type: 'otp', key: otp, username: 'admin', ip: '10.2.3.4', port: 22 });
    expect(JSON.stringify(creds?.secret?.internalData)).not.toContain(otp);
    const storage = b.storage as ReturnType<typeof createMemoryStorage>;
    for (const [k, v] of storage.dump()) expect(k + Buffer.from(v).toString('latin1')).not.toContain(otp);
    expect((await b.write('verify', { otp }))?.data).toEqual({ username: 'admin', ip: '10.2.3.4', role_name: 'otp' });
    expect((await errOf(b.write('verify', { otp }))).message).toBe('OTP not found');
    expect((await b.write('verify', { otp: 'ping' }))?.data).toEqual({ message: 'pong' });
    // Address and user checks.
    expect((await errOf(b.write('creds/otp', { ip: '10.1.2.3' }))).message).toContain('"ip"');
    expect((await errOf(b.write('creds/otp', { ip: '192.168.1.1' }))).message).toContain('"ip"');
    expect((await errOf(b.write('creds/otp', { ip: 'nope' }))).message).toContain('"ip"');
    expect((await errOf(b.write('creds/otp', {}))).message).toContain('"ip"');
    expect((await errOf(b.write('creds/otp', { ip: '10.2.3.4', username: 'root' }))).message).toContain('username');
    expect((await b.write('creds/otp', { ip: '10.2.3.4', username: 'ops' }))?.data?.username).toBe('ops');
    // Revocation deletes the OTP.
    const again = await b.write('creds/otp', { ip: '10.9.9.9' });
    await b.revoke(again!);
    expect((await errOf(b.write('verify', { otp: String(again?.data?.key) }))).message).toBe('OTP not found');
    // Lookup and zero-address roles.
    expect((await b.write('lookup', { ip: '10.2.3.4' }))?.data?.roles).toEqual(['otp']);
    expect((await b.write('lookup', { ip: '172.16.0.1' }))?.data?.roles).toEqual([]);
    expect((await errOf(b.write('config/zeroaddress', {}))).message).toContain('roles');
    await b.write('config/zeroaddress', { roles: 'otp' });
    expect((await b.read('config/zeroaddress'))?.data?.roles).toEqual(['otp']);
    expect((await b.write('creds/otp', { ip: '172.16.0.1' }))?.data?.ip).toBe('172.16.0.1');
    expect((await b.write('lookup', { ip: '172.16.0.1' }))?.data?.roles).toEqual(['otp']);
    await b.write('roles/otp', { key_type: 'otp', default_user: 'admin' }); // no cidr_list: usable through zero-address only
    expect((await b.write('lookup', { ip: '172.16.0.1' }))?.data?.roles).toEqual(['otp']);
    await b.delete('roles/otp');
    expect((await b.read('config/zeroaddress'))?.data?.roles).toEqual([]);
    await b.delete('config/zeroaddress');
    expect(await b.read('config/zeroaddress')).toBeNull();
  });

  test('racing verifies of one OTP: exactly one succeeds', async () => {
    await b.write('roles/otp', { key_type: 'otp', default_user: 'admin', cidr_list: '127.0.0.0/8' });
    const otp = String((await b.write('creds/otp', { ip: '127.0.0.1' }))?.data?.key);
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => b.write('verify', { otp })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });

  test('roles: list with key_info, read per key type, tidy', async () => {
    await b.write('roles/o', { key_type: 'otp', default_user: 'u', cidr_list: '10.0.0.0/8' });
    await b.write('roles/c', { key_type: 'ca', allow_host_certificates: true, issuer_ref: 'mine' });
    const list = await b.list('roles');
    expect(list?.data).toEqual({ keys: ['c', 'o'], key_info: { c: { key_type: 'ca', issuer_ref: 'mine' }, o: { key_type: 'otp', issuer_ref: '' } } });
    expect((await b.list('roles', { after: 'c' }))?.data?.keys).toEqual(['o']);
    const ca = (await b.read('roles/c'))?.data;
    expect(ca).toMatchObject({ key_type: 'ca', allow_host_certificates: true, allow_user_certificates: false, issuer_ref: 'mine', algorithm_signer: 'default', not_before_duration: 30, ttl: 0, max_ttl: 0 });
    expect(ca).not.toHaveProperty('cidr_list');
    await b.storage.put('keys/old-host', Buffer.from('x'));
    expect((await b.delete('tidy/dynamic-keys'))?.data?.message).toBe('Successfully deleted 1 keys');
    // A role naming a missing issuer fails at sign time, naming it.
    expect((await errOf(b.write('sign/c', { public_key: userKey, cert_type: 'host', valid_principals: 'h' }))).message).toMatch(/valid_principals|issuer/);
  });

  test('reads what the engine stored before it moved onto the record store (same keys and encodings)', async () => {
    const storage = createMemoryStorage();
    const json = (v: unknown) => Buffer.from(JSON.stringify(v), 'utf8');
    const ca = await generateKey(caKeySpec('ed25519', 0));
    const id = '6b1f0e0c-0000-4000-8000-000000000001';
    await storage.put(`issuer/${id}`, json({ id, name: 'old', kind: ca.kind, bits: ca.bits, public_key: ca.publicKey, private_key: ca.privatePkcs8 }));
    await storage.put('config/issuers', json({ default: id }));
    const role = {
      key_type: 'ca', default_user: '', allowed_users: '*', cidr_list: '', exclude_cidr_list: '', port: 22,
      default_user_template: false, allowed_users_template: false, allowed_domains: '', allowed_domains_template: false,
      ttl: 0, max_ttl: 0, allowed_critical_options: '', allowed_extensions: '', default_critical_options: {}, default_extensions: {},
      default_extensions_template: false, allow_user_certificates: true, allow_host_certificates: false, allow_bare_domains: false,
      allow_subdomains: false, allow_user_key_ids: false, allow_empty_principals: false, key_id_format: '',
      allowed_user_key_lengths: { ed25519: [256] }, algorithm_signer: 'default', not_before_duration: 30, issuer_ref: 'old',
    };
    await storage.put('roles/signer', json(role));
    await storage.put('config/zeroaddress', json({ roles: ['signer'] }));
    // An OTP issued before: the salt is raw bytes, the record named by the HMAC of the OTP under it.
    const salt = Buffer.alloc(32, 7);
    await storage.put('otp-salt', salt);
    const hmac = createHmac('sha256', salt).update('old-otp', 'utf8').digest('hex');
    await storage.put(`otp/${hmac}`, json({ ip: '10.0.0.1', username: 'admin', role_name: 'o' }));

    const old = await createTestBackend(createSshBackend(), { storage, system: { defaultLeaseTtl: async () => 3600, maxLeaseTtl: async () => 7200 } });
    expect((await old.read('config/ca'))?.data).toEqual({ issuer_id: id, issuer_name: 'old', public_key: `${ca.publicKey}\n` });
    expect(certOf(await old.write('sign/signer', { public_key: userKey, valid_principals: 'alice' })).principals).toEqual(['alice']);
    expect((await old.read('config/zeroaddress'))?.data?.roles).toEqual(['signer']);
    expect((await old.write('verify', { otp: 'old-otp' }))?.data).toEqual({ ip: '10.0.0.1', username: 'admin', role_name: 'o' });
    expect([...(await storage.get('otp-salt'))!]).toEqual([...salt]);
  });

  test('an issuer written elsewhere is found by name once the core invalidates its key', async () => {
    await b.write('issuers/import/first', { key_type: 'ed25519' });
    await b.write('roles/r', { key_type: 'ca', allow_user_certificates: true, allowed_users: '*', issuer_ref: 'later' });
    expect((await errOf(b.write('sign/r', { public_key: userKey, valid_principals: 'a' }))).message).toContain('"later" does not exist');
    const ca = await generateKey(caKeySpec('ed25519', 0));
    const id = '6b1f0e0c-0000-4000-8000-000000000002';
    const rec = { id, name: 'later', kind: ca.kind, bits: ca.bits, public_key: ca.publicKey, private_key: ca.privatePkcs8 };
    await b.storage.put(`issuer/${id}`, Buffer.from(JSON.stringify(rec)));
    await b.backend.invalidateKey(`issuer/${id}`);
    expect((await b.write('sign/r', { public_key: userKey, valid_principals: 'a' }))?.data?.issuer_id).toBe(id);
  });

  test('sign never serves a stale role, issuer or CA signer: writes here and invalidations from elsewhere', async () => {
    const signedBy = (res: LogicalResponse | null, publicKey: string) =>
      sshpk.parseCertificate(String(res?.data?.signed_key), 'openssh').isSignedByKey(sshpk.parseKey(publicKey, 'ssh'));
    const sign = (principal: string) => b.write('sign/r', { public_key: userKey, valid_principals: principal });
    const ca1 = String((await b.write('config/ca', { key_type: 'ed25519' }))?.data?.public_key);
    await b.write('roles/r', { key_type: 'ca', allow_user_certificates: true, allowed_users: 'alice', ttl: '5m' });
    expect(signedBy(await sign('alice'), ca1)).toBe(true);
    // The role rewritten through this mount: the next sign follows it.
    await b.write('roles/r', { key_type: 'ca', allow_user_certificates: true, allowed_users: 'bob', ttl: '10m' });
    expect((await errOf(sign('alice'))).message).toContain('valid_principals');
    const bob = certOf(await sign('bob'));
    expect(bob.validUntil - bob.validFrom).toBe(600 + 30);
    // A new default CA: the next certificate is signed by it.
    const ca2 = String((await b.write('config/ca', { key_type: 'ed25519' }))?.data?.public_key);
    const byCa2 = await sign('bob');
    expect([signedBy(byCa2, ca2), signedBy(byCa2, ca1)]).toEqual([true, false]);
    // The role changed elsewhere (another node): followed once the core invalidates its key.
    const stored = JSON.parse(Buffer.from((await b.storage.get('roles/r'))!).toString('utf8')) as Record<string, unknown>;
    await b.storage.put('roles/r', Buffer.from(JSON.stringify({ ...stored, allowed_users: 'carol' })));
    await b.backend.invalidateKey('roles/r');
    expect((await errOf(sign('bob'))).message).toContain('valid_principals');
    expect(certOf(await sign('carol')).principals).toEqual(['carol']);
    // The default issuer's key replaced elsewhere: the cached signer goes with the record it was made from.
    const id = String((await b.read('config/ca'))?.data?.issuer_id);
    const issuer = JSON.parse(Buffer.from((await b.storage.get(`issuer/${id}`))!).toString('utf8')) as Record<string, unknown>;
    const ca3 = await generateKey(caKeySpec('ed25519', 0));
    await b.storage.put(`issuer/${id}`, Buffer.from(JSON.stringify({ ...issuer, public_key: ca3.publicKey, private_key: ca3.privatePkcs8 })));
    await b.backend.invalidateKey(`issuer/${id}`);
    const byCa3 = await sign('carol');
    expect([signedBy(byCa3, ca3.publicKey), signedBy(byCa3, ca2)]).toEqual([true, false]);
  });

  test('generates a stable OpenAPI document (snapshot: review API drift here)', async () => {
    const doc = toOpenApi([{ prefix: 'ssh/', description: b.backend.describe() }], { title: 'ssh', version: '1' });
    expect(doc).toMatchSnapshot();
    expect(b.backend.specialPaths().unauthenticated.sort()).toEqual(['issuer/+/public_key', 'public_key', 'verify']);
  });
});
