/**
 * node-vault (a dev dependency) driven against the real binary, as a Node
 * application uses it: every call below must succeed and answer what Vault
 * would. Legacy paths it still calls (sys/policy, sys/revoke-prefix,
 * LIST without a trailing slash) included.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { startLeaseServer, type LeaseServer } from '../helpers/lease-plugin';
import { scratchDir, startConfigServer } from '../helpers/server';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const nodeVault = require('node-vault') as (opts: { endpoint: string; token?: string }) => Record<string, any>;

jest.setTimeout(180_000);

let s: LeaseServer;
afterAll(async () => {
  await s?.stop('SIGKILL');
});

interface CallResult {
  call: string;
  ok: boolean;
  error?: string;
}

it('every node-vault call the suite makes succeeds with the right answer', async () => {
  s = await startLeaseServer();
  expect((await s.api('POST', 'lt/roles/r', { ttl: 300, max_ttl: 3600 })).status).toBe(204);
  const v = nodeVault({ endpoint: s.url, token: s.rootToken });
  const results: CallResult[] = [];
  const call = async <T = any>(name: string, fn: () => Promise<T>, check?: (r: T) => void): Promise<T | undefined> => {
    try {
      const r = await fn();
      // node-vault adopts the token of every token-creating answer (tokenSource): the admin client keeps root.
      v.token = s.rootToken;
      check?.(r);
      results.push({ call: name, ok: true });
      return r;
    } catch (e) {
      results.push({ call: name, ok: false, error: e instanceof Error ? e.message.slice(0, 400) : String(e) });
      return undefined;
    }
  };
  const refused = async (name: string, fn: () => Promise<unknown>, status: number) => {
    try {
      await fn();
      results.push({ call: name, ok: false, error: 'succeeded but must be refused' });
    } catch (e) {
      const got = (e as { response?: { statusCode?: number } }).response?.statusCode;
      results.push({ call: name, ok: got === status, ...(got === status ? {} : { error: `status ${got}: ${(e as Error).message}` }) });
    }
  };
  const eq = (a: unknown, b: unknown) => expect(a).toEqual(b);

  // ---- sys status ----
  await call('health', () => v.health(), (r) => eq(r.initialized, true));
  await call('initialized', () => v.initialized(), (r) => eq(r.initialized, true));
  await call('status', () => v.status(), (r) => eq(r.sealed, false));
  await call('leader', () => v.leader(), (r) => eq(r.is_self, true));
  await call('rotate', () => v.rotate());
  await call('stepDown', () => v.stepDown());
  await call('help', () => v.help('sys/mounts'), (r) => eq(typeof r.help, 'string'));

  // ---- mounts ----
  await call('mount kv v1', () => v.mount({ mount_point: 'nv-kv', type: 'kv', options: { version: '1' } }));
  await call('mount kv v2', () => v.mount({ mount_point: 'nv-kv2', type: 'kv', options: { version: '2' } }));
  await call('mount transit', () => v.mount({ mount_point: 'transit', type: 'transit' }));
  await call('mounts', () => v.mounts(), (r) => eq(Object.keys(r.data).includes('nv-kv2/'), true));
  await call('write (kv v1)', () => v.write('nv-kv/app', { password: 'pw' }));
  await call('read (kv v1)', () => v.read('nv-kv/app'), (r) => eq(r.data, { password: 'pw' }));
  await call('list (kv v1, no trailing slash)', () => v.list('nv-kv'), (r) => eq(r.data.keys, ['app']));
  await call('remount', () => v.remount({ from: 'nv-kv', to: 'nv-kv-moved' }));
  await call('read (after remount)', () => v.read('nv-kv-moved/app'), (r) => eq(r.data, { password: 'pw' }));
  await call('delete (kv v1)', () => v.delete('nv-kv-moved/app'));
  await call('unmount', () => v.unmount({ mount_point: 'nv-kv-moved' }));
  await call('mount generic (kv version 1)', () => v.mount({ mount_point: 'nv-gen', type: 'generic' }));
  await call('write (generic)', () => v.write('nv-gen/old', { v: 'g' }));
  await call('read (generic)', () => v.read('nv-gen/old'), (r) => eq(r.data, { v: 'g' }));
  // The cubbyhole: the caller's own kv store, which no other token sees.
  await call('write (cubbyhole)', () => v.write('cubbyhole/nv/note', { n: 'mine' }));
  await call('read (cubbyhole)', () => v.read('cubbyhole/nv/note'), (r) => eq(r.data, { n: 'mine' }));
  await call('list (cubbyhole)', () => v.list('cubbyhole/nv'), (r) => eq(r.data.keys, ['note']));
  const neighbour = await call('tokenCreate (cubbyhole neighbour)', () => v.tokenCreate({ policies: ['default'], ttl: '10m' }));
  if (neighbour) await refused("read (another token's cubbyhole)", () => nodeVault({ endpoint: s.url, token: neighbour.auth.client_token }).read('cubbyhole/nv/note'), 404);
  await call('delete (cubbyhole)', () => v.delete('cubbyhole/nv/note'));
  await call('read sys/mounts/:path/tune (effective TTLs)', () => v.read('sys/mounts/nv-kv2/tune'), (r) => eq([r.data.default_lease_ttl, r.data.max_lease_ttl], [2764800, 2764800]));
  await call('write (kv v2 data)', () => v.write('nv-kv2/data/svc', { data: { a: '1' } }), (r) => eq(r.data.version, 1));
  await call('update (kv v2 PATCH)', () => v.update('nv-kv2/data/svc', { data: { b: '2' } }), (r) => eq(r.data.version, 2));
  await refused('write (kv v2 data, options.cas -1)', () => v.write('nv-kv2/data/svc', { data: { c: '3' }, options: { cas: -1 } }), 400);
  await call('read (kv v2 data)', () => v.read('nv-kv2/data/svc'), (r) => eq(r.data.data, { a: '1', b: '2' }));
  await call('list (kv v2 metadata)', () => v.list('nv-kv2/metadata'), (r) => eq(r.data.keys, ['svc']));
  await call('destroySecretVersions', () => v.destroySecretVersions({ mount_point: 'nv-kv2', path: 'svc', versions: [1] }));
  await call('read (kv v2 metadata)', () => v.read('nv-kv2/metadata/svc'), (r) => eq(r.data.versions['1'].destroyed, true));

  // ---- policies (node-vault uses the legacy sys/policy paths) ----
  const rules = 'path "nv-kv2/data/*" { capabilities = ["read"] }';
  await call('addPolicy', () => v.addPolicy({ name: 'nv-reader', rules }));
  await call('getPolicy', () => v.getPolicy({ name: 'nv-reader' }), (r) => eq(r.rules, rules));
  await call('policies', () => v.policies(), (r) => eq(r.policies.includes('nv-reader'), true));
  await call('addPolicy (scratch)', () => v.addPolicy({ name: 'nv-scratch', rules }));
  await call('removePolicy', () => v.removePolicy({ name: 'nv-scratch' }));

  // ---- audit ----
  const auditFile = join(scratchDir('sr-nv-'), 'audit.log');
  await call('enableAudit', () => v.enableAudit({ name: 'nvfile', type: 'file', options: { file_path: auditFile } }));
  await refused('write sys/audit-hash (no such device)', () => v.write('sys/audit-hash/no-device', { input: 'x' }), 400);
  await call('audits', () => v.audits(), (r) => eq(Object.keys(r.data ?? r).includes('nvfile/'), true));

  // ---- transit ----
  await call('transitCreateKey', () => v.transitCreateKey({ name: 'nvk' }));
  await call('write (transit key, empty strings as false)', () => v.write('transit/keys/nv-empty', { exportable: '', allow_plaintext_backup: '' }));
  await call('transitReadKey (empty strings as false)', () => v.transitReadKey({ name: 'nv-empty' }), (r) => eq([r.data.exportable, r.data.allow_plaintext_backup], [false, false]));
  await refused('read transit/backup (no allow_plaintext_backup)', () => v.read('transit/backup/nv-empty'), 500);
  await call('transitCreateKey (rsa-2048)', () => v.transitCreateKey({ name: 'nv-rsa', type: 'rsa-2048' }));
  const pss = await call('write transit/sign (pss, salt_length -1)', () => v.write('transit/sign/nv-rsa', { input: 'bXNn', signature_algorithm: 'pss', salt_length: -1 }));
  if (pss) await call('write transit/verify (pss, salt_length -1)', () => v.write('transit/verify/nv-rsa', { input: 'bXNn', signature: pss.data.signature, signature_algorithm: 'pss', salt_length: -1 }), (r) => eq(r.data.valid, true));
  await call('transitReadKey', () => v.transitReadKey({ name: 'nvk' }), (r) => eq(r.data.type, 'aes256-gcm96'));
  await call('transitListKeys', () => v.transitListKeys(), (r) => eq(r.data.keys, ['nv-empty', 'nv-rsa', 'nvk']));
  const plaintext = Buffer.from('node-vault secret').toString('base64');
  const enc = await call('encryptData', () => v.encryptData({ name: 'nvk', plaintext }), (r) => eq(r.data.ciphertext.startsWith('service:v1:'), true));
  if (enc) {
    await call('decryptData', () => v.decryptData({ name: 'nvk', ciphertext: enc.data.ciphertext }), (r) => eq(r.data.plaintext, plaintext));
    const fromVault = enc.data.ciphertext.replace(/^service:/, 'vault:');
    await call('decryptData (vault: prefix)', () => v.decryptData({ name: 'nvk', ciphertext: fromVault }), (r) => eq(r.data.plaintext, plaintext));
    await call('write (transit key rotate)', () => v.write('transit/keys/nvk/rotate', {}));
    await call('rewrapData', () => v.rewrapData({ name: 'nvk', ciphertext: enc.data.ciphertext }), (r) => eq(r.data.ciphertext.startsWith('service:v2:'), true));
    await call('rewrapData (vault: prefix in, service: out)', () => v.rewrapData({ name: 'nvk', ciphertext: fromVault }), (r) => eq(r.data.ciphertext.startsWith('service:v2:'), true));
  }
  await call('write (transit hash)', () => v.write('transit/hash', { input: plaintext }), (r) => eq(r.data.sum, createHash('sha256').update('node-vault secret').digest('hex')));
  await call('write (transit key config)', () => v.write('transit/keys/nvk/config', { deletion_allowed: true }));
  await call('transitDeleteKey', () => v.transitDeleteKey({ name: 'nvk' }));

  // ---- approle ----
  await call('enableAuth', () => v.enableAuth({ mount_point: 'approle', type: 'approle' }));
  await call('auths', () => v.auths(), (r) => eq(Object.keys(r.data).includes('approle/'), true));
  await call('read sys/auth/:path/tune (effective TTLs)', () => v.read('sys/auth/approle/tune'), (r) => eq([r.data.default_lease_ttl, r.data.max_lease_ttl], [2764800, 2764800]));
  await call('addApproleRole', () => v.addApproleRole({ role_name: 'nvapp', policies: 'nv-reader', token_ttl: 600 }));
  await call('approleRoles', () => v.approleRoles(), (r) => eq(r.data.keys, ['nvapp']));
  await call('getApproleRole', () => v.getApproleRole({ role_name: 'nvapp' }), (r) => eq(r.data.token_ttl, 600));
  await call('updateApproleRoleId', () => v.updateApproleRoleId({ role_name: 'nvapp', role_id: 'nv-role-id' }));
  await call('getApproleRoleId', () => v.getApproleRoleId({ role_name: 'nvapp' }), (r) => eq(r.data.role_id, 'nv-role-id'));
  const secret = await call('getApproleRoleSecret', () => v.getApproleRoleSecret({ role_name: 'nvapp' }), (r) => eq(typeof r.data.secret_id, 'string'));
  const second = await call('getApproleRoleSecret (second)', () => v.getApproleRoleSecret({ role_name: 'nvapp', metadata: '{"host":"h2"}' }));
  if (secret && second) {
    await call('approleSecretLookup', () => v.approleSecretLookup({ role_name: 'nvapp', secret_id: secret.data.secret_id }), (r) => eq(r.data.secret_id_accessor, secret.data.secret_id_accessor));
    await call('approleSecretAccessors', () => v.approleSecretAccessors({ role_name: 'nvapp' }), (r) => eq(r.data.keys.length, 2));
    await call('approleSecretAccessorLookup', () => v.approleSecretAccessorLookup({ role_name: 'nvapp', secret_id_accessor: second.data.secret_id_accessor }), (r) => eq(r.data.metadata, { host: 'h2' }));
    await call('approleSecretAccessorDestroy', () => v.approleSecretAccessorDestroy({ role_name: 'nvapp', secret_id_accessor: second.data.secret_id_accessor }));
    const app = nodeVault({ endpoint: s.url });
    await call('approleLogin', () => app.approleLogin({ role_id: 'nv-role-id', secret_id: secret.data.secret_id }), (r) => eq(r.auth.policies.includes('nv-reader'), true));
    await call('read (as the approle token)', () => app.read('nv-kv2/data/svc'), (r) => eq(r.data.data.a, '1'));
    await refused('write (as the approle token: denied)', () => app.write('nv-kv2/data/svc', { data: { x: 'y' } }), 403);
    await call('approleSecretDestroy', () => v.approleSecretDestroy({ role_name: 'nvapp', secret_id: secret.data.secret_id }));
  }
  await call('deleteApproleRole', () => v.deleteApproleRole({ role_name: 'nvapp' }));
  await call('disableAuth', () => v.disableAuth({ mount_point: 'approle' }));

  // ---- userpass ----
  await call('enableAuth (userpass)', () => v.enableAuth({ mount_point: 'userpass', type: 'userpass' }));
  await call('write (userpass user)', () => v.write('auth/userpass/users/nv-user', { password: 'nv-pw', policies: 'nv-reader' }));
  await call('read (userpass user)', () => v.read('auth/userpass/users/nv-user'), (r) => eq(r.data.token_policies, ['nv-reader']));
  await call('list (userpass users)', () => v.list('auth/userpass/users'), (r) => eq(r.data.keys, ['nv-user']));
  const person = nodeVault({ endpoint: s.url });
  await call('userpassLogin', () => person.userpassLogin({ username: 'nv-user', password: 'nv-pw' }), (r) => eq(r.auth.policies.includes('nv-reader'), true));
  await call('read (as the userpass token)', () => person.read('nv-kv2/data/svc'), (r) => eq(r.data.data.a, '1'));
  await refused('userpassLogin (wrong password)', () => nodeVault({ endpoint: s.url }).userpassLogin({ username: 'nv-user', password: 'nope' }), 400);
  await refused('userpassLogin (no such user)', () => nodeVault({ endpoint: s.url }).userpassLogin({ username: 'nobody', password: 'nope' }), 400);
  await call('disableAuth (userpass)', () => v.disableAuth({ mount_point: 'userpass' }));

  // ---- tokens ----
  const child = await call('tokenCreate', () => v.tokenCreate({ policies: ['nv-reader'], ttl: '1h' }), (r) => eq(r.auth.policies, ['default', 'nv-reader']));
  const orphan = await call('tokenCreateOrphan', () => v.tokenCreateOrphan({ policies: ['default'], ttl: '1h' }), (r) => eq(r.auth.orphan, true));
  await call('tokenLookupSelf', () => v.tokenLookupSelf(), (r) => eq(r.data.policies, ['root']));
  if (child) {
    const { client_token: ct, accessor } = child.auth;
    await call('tokenLookup', () => v.tokenLookup({ token: ct }), (r) => eq(r.data.accessor, accessor));
    await call('tokenLookupAccessor', () => v.tokenLookupAccessor({ accessor }), (r) => eq(r.data.accessor, accessor));
    await call('tokenRenew', () => v.tokenRenew({ token: ct, increment: '2h' }), (r) => eq(r.auth.client_token, ct));
    await call('tokenAccessors', () => v.tokenAccessors(), (r) => eq(r.data.keys.includes(accessor), true));
    const user = nodeVault({ endpoint: s.url, token: ct });
    await call('tokenRenewSelf (child)', () => user.tokenRenewSelf(), (r) => eq(r.auth.accessor, accessor));
    await call('tokenRevokeSelf (child)', () => user.tokenRevokeSelf());
    await refused('tokenLookupSelf (revoked)', () => user.tokenLookupSelf(), 403);
    await refused('tokenLookup (revoked)', () => v.tokenLookup({ token: ct }), 403);
    await refused('tokenLookupAccessor (revoked)', () => v.tokenLookupAccessor({ accessor }), 403);
  }
  await call('addTokenRole', () => v.addTokenRole({ role_name: 'nvrole', allowed_policies: 'nv-reader', orphan: true }));
  await call('getTokenRole', () => v.getTokenRole({ role_name: 'nvrole' }), (r) => eq(r.data.orphan, true));
  await call('tokenRoles', () => v.tokenRoles(), (r) => eq(r.data.keys, ['nvrole']));
  const fromRole = await call('tokenCreateRole', () => v.tokenCreateRole({ role_name: 'nvrole', policies: ['nv-reader'] }), (r) => eq(r.auth.orphan, true));
  if (fromRole) await call('tokenRevokeAccessor', () => v.tokenRevokeAccessor({ accessor: fromRole.auth.accessor }));
  await call('removeTokenRole', () => v.removeTokenRole({ role_name: 'nvrole' }));
  const parent = await call('tokenCreate (parent)', () => v.tokenCreate({ policies: ['default'], ttl: '1h' }));
  if (parent) await call('tokenRevokeOrphan', () => v.tokenRevokeOrphan({ token: parent.auth.client_token }));
  if (orphan) await call('tokenRevoke', () => v.tokenRevoke({ token: orphan.auth.client_token }));

  // ---- leases (legacy sys/revoke-prefix included) ----
  const creds = await call('read (leased credentials)', () => v.read('lt/creds/r'), (r) => eq(r.lease_id.startsWith('lt/creds/r/'), true));
  if (creds) {
    await call('renew', () => v.renew({ lease_id: creds.lease_id, increment: 600 }), (r) => eq(r.lease_duration, 600));
    await call('revoke', () => v.revoke({ lease_id: creds.lease_id }));
  }
  await v.read('lt/creds/r');
  await call('revokePrefix (sys/revoke-prefix)', () => v.revokePrefix({ path_prefix: 'lt/creds/r' }));

  // ---- response wrapping ----
  const wrapped = await call('read (X-Vault-Wrap-TTL)', () => v.read('nv-kv2/data/svc', { headers: { 'X-Vault-Wrap-TTL': '90s' } }), (r) => {
    eq(r.data, null);
    eq(r.wrap_info.ttl, 90);
  });
  if (wrapped) {
    await call('unwrap (token in the body)', () => v.unwrap({ token: wrapped.wrap_info.token }), (r) => eq(r.data.data, { a: '1', b: '2' }));
    await refused('unwrap (second time)', () => v.unwrap({ token: wrapped.wrap_info.token }), 400);
  }
  const wrappedToken = await call('tokenCreate (X-Vault-Wrap-TTL)', () => v.tokenCreate({ policies: ['default'], requestOptions: { headers: { 'X-Vault-Wrap-TTL': '60' } } }), (r) => eq(typeof r.wrap_info.wrapped_accessor, 'string'));
  if (wrappedToken) {
    const holder = nodeVault({ endpoint: s.url, token: wrappedToken.wrap_info.token });
    await call('unwrap (wrapping token as the client token)', () => holder.unwrap(), (r) => eq(r.auth.accessor, wrappedToken.wrap_info.wrapped_accessor));
    await refused('unwrap (spent wrapping token as the client token)', () => holder.unwrap(), 400);
  }

  const emptyWrap = await call('write sys/wrapping/wrap (empty object)', () => v.write('sys/wrapping/wrap', {}, { headers: { 'X-Vault-Wrap-TTL': '60' } }), (r) => eq(typeof r.wrap_info.token, 'string'));
  if (emptyWrap) await call('unwrap (empty object)', () => v.unwrap({ token: emptyWrap.wrap_info.token }), (r) => eq(r.data, {}));

  // ---- SSH zero-address roles, policies with the brace on the next line, sudo on token create, token counters ----
  await call('mount ssh', () => v.mount({ mount_point: 'nv-ssh', type: 'ssh' }));
  await call('write ssh config/zeroaddress (before its role)', () => v.write('nv-ssh/config/zeroaddress', { roles: 'nv-otp' }));
  await call('write ssh role (OTP, no cidr_list)', () => v.write('nv-ssh/roles/nv-otp', { key_type: 'otp', default_user: 'ubuntu' }));
  await call('write ssh creds (zero-address)', () => v.write('nv-ssh/creds/nv-otp', { ip: '192.0.2.7' }), (r) => eq(r.data.ip, '192.0.2.7'));
  await call('write ssh config/ca', () => v.write('nv-ssh/config/ca', { key_type: 'ed25519' }));
  await call('delete ssh config/ca (204)', () => v.delete('nv-ssh/config/ca'), (r) => eq(r, '')); // an empty 204, no warnings body
  await call('addPolicy (brace on the next line)', () => v.addPolicy({ name: 'nv-sudo-create', rules: 'path "auth/token/create"\n{\n  capabilities = ["create", "update", "sudo"]\n}\n' }));
  const sudoTok = await call('tokenCreate (sudo on auth/token/create)', () => v.tokenCreate({ policies: ['nv-sudo-create'], ttl: '10m' }));
  if (sudoTok) {
    const sv = nodeVault({ endpoint: s.url, token: sudoTok.auth.client_token });
    await call('tokenCreate (no_parent, with sudo)', () => sv.tokenCreate({ no_parent: true, policies: ['nv-reader'], ttl: '5m' }), (r) => eq([r.auth.orphan, r.auth.policies], [true, ['default', 'nv-reader']]));
  }
  await call('addPolicy (token create without sudo)', () => v.addPolicy({ name: 'nv-plain-create', rules: 'path "auth/token/create" { capabilities = ["create", "update"] }' }));
  const plainTok = await call('tokenCreate (no sudo)', () => v.tokenCreate({ policies: ['nv-plain-create'], ttl: '10m' }));
  if (plainTok) await refused('tokenCreate (no_parent, without sudo)', () => nodeVault({ endpoint: s.url, token: plainTok.auth.client_token }).tokenCreate({ no_parent: true }), 400);
  await call('read sys/internal/counters/tokens', () => v.read('sys/internal/counters/tokens'), (r) => eq(r.data.counters.service_tokens.total > 0, true));

  // ---- rekey backup and verification (cancelled: the unseal key stays for the end) ----
  await refused('read sys/rekey/backup (none)', () => v.read('sys/rekey/backup'), 400);
  await call('delete sys/rekey/backup', () => v.delete('sys/rekey/backup'));
  const rk = await call('write sys/rekey/init (require_verification)', () => v.write('sys/rekey/init', { secret_shares: 2, secret_threshold: 2, require_verification: true }), (r) => eq(r.verification_required, true));
  if (rk) {
    const upd = await call('write sys/rekey/update (to verification)', () => v.write('sys/rekey/update', { key: s.unsealKeys[0]!, nonce: rk.nonce }), (r) => eq([r.complete, r.verification_required, r.keys.length], [true, true, 2]));
    if (upd) {
      await call('read sys/rekey/verify', () => v.read('sys/rekey/verify'), (r) => eq([r.nonce, r.progress], [upd.verification_nonce, 0]));
      await call('write sys/rekey/verify (one new share)', () => v.write('sys/rekey/verify', { key: upd.keys[0], nonce: upd.verification_nonce }), (r) => eq(r.progress, 1));
      await call('delete sys/rekey/verify (restart)', () => v.delete('sys/rekey/verify'), (r) => eq(r.progress, 0));
    }
    await call('delete sys/rekey/init (cancel during verification)', () => v.delete('sys/rekey/init'));
  }

  // ---- generate-root ----
  await call('generateRootCancel (none started)', () => v.generateRootCancel());
  const started = await call('generateRootInit', () => v.generateRootInit(), (r) => eq(r.started, true));
  if (started) {
    const done = await call('generateRootUpdate', () => v.generateRootUpdate({ key: s.unsealKeys[0]!, nonce: started.nonce }), (r) => eq(r.complete, true));
    if (done) {
      const raw = Buffer.from(done.encoded_token, 'base64');
      const root = Buffer.from(raw.map((b, i) => b ^ started.otp.charCodeAt(i))).toString('utf8');
      const nr = nodeVault({ endpoint: s.url, token: root });
      await call('tokenLookupSelf (generated root)', () => nr.tokenLookupSelf(), (r) => eq(r.data.policies, ['root']));
    }
  }

  // ---- seal and unseal last ----
  await call('disableAudit', () => v.disableAudit({ name: 'nvfile' }));
  await call('seal', () => v.seal());
  await call('status (sealed)', () => v.status(), (r) => eq(r.sealed, true));
  await call('unseal', () => v.unseal({ key: s.unsealKeys[0]! }), (r) => eq(r.sealed, false));

  if (process.env.COMPAT_REPORT) console.log(results.map((r) => `${r.ok ? 'ok  ' : 'FAIL'} ${r.call}${r.error ? `  (${r.error})` : ''}`).join('\n'));
  expect(results.length).toBeGreaterThan(85);
  expect(results.filter((r) => !r.ok)).toEqual([]);
});

it('node-vault initializes, unseals and writes to a server started from a Vault config with storage "file"', async () => {
  const server = await startConfigServer('storage "file" { path = "$DIR/vault-data" }\nlistener "tcp" {\n  address = "127.0.0.1:$PORT"\n  tls_disable = true\n}\n');
  try {
    const v = nodeVault({ endpoint: server.url });
    expect((await v.initialized()).initialized).toBe(false);
    const init = await v.init({ secret_shares: 1, secret_threshold: 1 });
    v.token = init.root_token;
    expect((await v.unseal({ key: init.keys[0] })).sealed).toBe(false);
    await v.mount({ mount_point: 'kv', type: 'kv' });
    await v.write('kv/app', { password: 'pw' });
    expect((await v.read('kv/app')).data).toEqual({ password: 'pw' });
  } finally {
    await server.stop();
  }
});
