/**
 * SSH engine end to end: the real binary, the ssh plugin process and a
 * private OpenSSH server (scripts/services/kinds/sshd.js). Certificates the
 * engine signs must log in to sshd and run a command; an unsigned key, an
 * expired certificate and a certificate for another principal must be refused
 * by sshd itself. ssh-keygen reads host certificates. OTPs go through their
 * leases (sys/leases) and are checked never to appear in plain text in the
 * server's output, its audit log or its storage.
 */
import { execFile } from 'node:child_process';
import { appendFileSync, chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scratchDir, startDevServer, type RunningServer } from '../helpers/server';
import { sharedService } from '../helpers/services';

jest.setTimeout(180_000);

let s: RunningServer;
let dir: string;
let sshdPort: string;
let caFile: string;
let auditFile: string;

beforeAll(async () => {
  const vars = sharedService('sshd', 'STRONGROOM_TEST_SSHD_URL');
  sshdPort = vars.STRONGROOM_TEST_SSHD_PORT ?? process.env.STRONGROOM_TEST_SSHD_PORT ?? '';
  caFile = vars.STRONGROOM_TEST_SSHD_CA_FILE ?? process.env.STRONGROOM_TEST_SSHD_CA_FILE ?? '';
  if (!sshdPort || !caFile) throw new Error('the sshd service gave no STRONGROOM_TEST_SSHD_PORT / STRONGROOM_TEST_SSHD_CA_FILE');
  dir = scratchDir('sr-ssh-');
  // Debug logging, so a leak through any log line would show in the output searched below.
  s = await startDevServer({ extraArgs: ['-log-level=debug'] });
  auditFile = join(dir, 'audit.log');
  expect((await s.api('POST', 'sys/audit/file', { type: 'file', options: { file_path: auditFile } })).status).toBe(204);
  expect((await s.api('POST', 'sys/mounts/ssh', { type: 'ssh' })).status).toBe(204);
});
afterAll(async () => {
  await s?.stop();
});

async function ok(method: string, path: string, body?: unknown, token?: string) {
  const r = await s.api(method, path, body, token === undefined ? {} : { token }).catch((e) => {
    throw new Error(`${method} ${path}: ${e}\n${s.output().slice(-3000)}`);
  });
  if (r.status < 200 || r.status > 299) throw new Error(`${method} ${path} -> ${r.status} ${r.text}`);
  return r;
}

/** A 400 whose errors name `field`. */
async function expect400(path: string, body: unknown, field: string) {
  const r = await s.api('POST', path, body);
  expect({ path, field, status: r.status }).toEqual({ path, field, status: 400 });
  expect(r.body.errors.join(' ')).toContain(`"${field}"`);
}

/**
 * Runs a command without blocking the event loop (a blocked test process misses the
 * server closing an idle keep-alive connection, and its next request fails).
 */
function run(cmd: string, args: string[], timeout = 30_000): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { encoding: 'utf8', timeout }, (err, stdout, stderr) => {
      const status = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : null) : 0;
      resolve({ status, stdout, stderr });
    });
  });
}

let keyCount = 0;
/** A fresh ed25519 key pair from ssh-keygen: its private key file and public key line. */
async function newKey(type = 'ed25519'): Promise<{ file: string; pub: string }> {
  const file = join(dir, `key${++keyCount}`);
  const r = await run('ssh-keygen', ['-q', '-t', type, '-N', '', '-C', 'e2e', '-f', file]);
  expect(r.status).toBe(0);
  return { file, pub: readFileSync(`${file}.pub`, 'utf8') };
}

/** Runs `command` on the private sshd as root with `key` and, when given, the certificate `cert`. */
function sshRun(key: string, cert: string | null, command: string) {
  const certFile = `${key}-signed.pub`;
  if (cert !== null) writeFileSync(certFile, cert, { mode: 0o600 });
  const args = [
    '-o', 'BatchMode=yes',
    '-o', 'StrictHostKeyChecking=no',
    '-o', 'UserKnownHostsFile=/dev/null',
    '-o', 'IdentitiesOnly=yes',
    '-o', 'IdentityAgent=none',
    '-o', 'LogLevel=ERROR',
    '-o', 'ConnectTimeout=10',
    '-i', key,
    ...(cert !== null ? ['-o', `CertificateFile=${certFile}`] : []),
    '-p', sshdPort,
    'root@127.0.0.1',
    command,
  ];
  return run('ssh', args);
}

/** Makes sshd trust an issuer: its public key from the unauthenticated text/plain endpoint. */
async function trust(issuerRef: string) {
  const r = await s.api('GET', `ssh/issuer/${issuerRef}/public_key`, undefined, { token: null });
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toContain('text/plain');
  expect(r.text).toMatch(/^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp\d+) [A-Za-z0-9+/=]+\n$/);
  appendFileSync(caFile, r.text);
  return r.text;
}

describe('certificate authority against a real sshd', () => {
  beforeAll(async () => {
    const ca = await ok('POST', 'ssh/issuers/import/ed', { key_type: 'ssh-ed25519' });
    expect(ca.body.data).toMatchObject({ issuer_name: 'ed', issuer_id: expect.any(String) });
    expect(await trust('ed')).toBe(ca.body.data.public_key);
    await ok('POST', 'ssh/roles/login', { key_type: 'ca', allow_user_certificates: true, allowed_users: 'root,alice', default_user: 'root', ttl: '10m', issuer_ref: 'ed' });
  });

  test('a signed key logs in and runs a command', async () => {
    const key = await newKey();
    const signed = await ok('POST', 'ssh/sign/login', { public_key: key.pub });
    expect(signed.body.lease_id).toBe('');
    expect(signed.body.data).toMatchObject({ issuer_id: expect.any(String), serial_number: expect.stringMatching(/^[0-9a-f]+$/), signed_key: expect.stringMatching(/^ssh-ed25519-cert-v01@openssh\.com /) });
    const r = await sshRun(key.file, signed.body.data.signed_key, 'echo "answer-$((6*7))"; id -un');
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    expect(r.stdout.split('\n')).toEqual(['answer-42', 'root', '']);
  });

  test('an unsigned key is refused by sshd', async () => {
    const key = await newKey();
    const r = await sshRun(key.file, null, 'true');
    expect(r.status).toBe(255);
    expect(r.stderr).toContain('Permission denied');
  });

  test('an expired certificate is refused by sshd', async () => {
    await ok('POST', 'ssh/roles/short', { key_type: 'ca', allow_user_certificates: true, allowed_users: 'root', default_user: 'root', not_before_duration: 0, issuer_ref: 'ed' });
    const key = await newKey();
    const signed = await ok('POST', 'ssh/sign/short', { public_key: key.pub, ttl: 1 });
    await new Promise((r) => setTimeout(r, 2500));
    const r = await sshRun(key.file, signed.body.data.signed_key, 'true');
    expect(r.status).toBe(255);
    expect(r.stderr).toContain('Permission denied');
  });

  test('a certificate for another principal is refused by sshd', async () => {
    const key = await newKey();
    const signed = await ok('POST', 'ssh/sign/login', { public_key: key.pub, valid_principals: 'alice' });
    const r = await sshRun(key.file, signed.body.data.signed_key, 'true');
    expect(r.status).toBe(255);
    expect(r.stderr).toContain('Permission denied');
  });

  test('RSA (rsa-sha2-256 and rsa-sha2-512) and ECDSA issuers sign certificates sshd accepts', async () => {
    await ok('POST', 'ssh/issuers/import/rsa', { key_type: 'rsa', key_bits: 2048 });
    await ok('POST', 'ssh/issuers/import/p521', { key_type: 'ecdsa-sha2-nistp521' });
    await trust('rsa');
    await trust('p521');
    const cases: [string, Record<string, unknown>][] = [
      ['rsa', { algorithm_signer: 'rsa-sha2-256' }],
      ['rsa', { algorithm_signer: 'rsa-sha2-512' }],
      ['p521', {}],
    ];
    for (const [issuer, extra] of cases) {
      await ok('POST', 'ssh/roles/multi', { key_type: 'ca', allow_user_certificates: true, allowed_users: 'root', default_user: 'root', issuer_ref: issuer, ...extra });
      // Several signatures per CA: an ECDSA signature whose r or s starts with a zero byte must still verify.
      for (let i = 0; i < (issuer === 'p521' ? 4 : 1); i++) {
        const key = await newKey(i % 2 ? 'ed25519' : 'ecdsa');
        const signed = await ok('POST', 'ssh/sign/multi', { public_key: key.pub });
        const r = await sshRun(key.file, signed.body.data.signed_key, 'echo in');
        expect({ issuer, extra, status: r.status, stderr: r.stderr, stdout: r.stdout }).toEqual({ issuer, extra, status: 0, stderr: '', stdout: 'in\n' });
      }
    }
  });

  test('issue: the returned private key and certificate log in', async () => {
    for (const key_type of ['ed25519', 'ec', 'rsa']) {
      const issued = await ok('POST', 'ssh/issue/login', { key_type, valid_principals: 'root' });
      expect(issued.body.data).toMatchObject({ private_key_type: key_type, issuer_id: expect.any(String), serial_number: expect.any(String) });
      const file = join(dir, `issued-${key_type}`);
      writeFileSync(file, issued.body.data.private_key);
      chmodSync(file, 0o600);
      // ssh reads a PEM key's public half from <key>.pub to pair it with the certificate (OpenSSH-format keys carry it inside).
      const pub = await run('ssh-keygen', ['-y', '-f', file]);
      expect({ key_type, status: pub.status }).toEqual({ key_type, status: 0 });
      writeFileSync(`${file}.pub`, pub.stdout);
      const r = await sshRun(file, issued.body.data.signed_key, 'echo issued');
      expect({ key_type, status: r.status, stderr: r.stderr, stdout: r.stdout }).toEqual({ key_type, status: 0, stderr: '', stdout: 'issued\n' });
    }
  });

  test('a host certificate verifies with ssh-keygen -L and names the requested principals', async () => {
    await ok('POST', 'ssh/roles/hosts', { key_type: 'ca', allow_host_certificates: true, allowed_domains: 'example.com', allow_subdomains: true, allow_user_key_ids: true, ttl: '1h', issuer_ref: 'ed' });
    const key = await newKey();
    const signed = await ok('POST', 'ssh/sign/hosts', { public_key: key.pub, cert_type: 'host', valid_principals: 'web1.example.com,db.internal.example.com', key_id: 'web1' });
    const certFile = `${key.file}-cert.pub`;
    writeFileSync(certFile, signed.body.data.signed_key);
    const r = await run('ssh-keygen', ['-L', '-f', certFile]);
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    expect(r.stdout).toContain('Type: ssh-ed25519-cert-v01@openssh.com host certificate');
    expect(r.stdout).toContain('Key ID: "web1"');
    expect(r.stdout).toMatch(/Principals:\s*\n\s+web1\.example\.com\n\s+db\.internal\.example\.com\n/);
    const caPub = join(dir, 'ed-ca.pub');
    writeFileSync(caPub, (await s.api('GET', 'ssh/issuer/ed/public_key')).text);
    const caFingerprint = (await run('ssh-keygen', ['-l', '-f', caPub])).stdout.split(' ')[1];
    expect(caFingerprint).toMatch(/^SHA256:/);
    expect(r.stdout).toContain(`Signing CA: ED25519 ${caFingerprint}`);
    // A client trusting the CA with @cert-authority accepts the host certificate: ssh-keygen -L shows it valid for an hour.
    expect(r.stdout).toMatch(/Valid: from \S+ to \S+/);
  });

  test('every role constraint is refused with a 400 naming the field', async () => {
    await ok('POST', 'ssh/roles/strict', {
      key_type: 'ca',
      allow_user_certificates: true,
      allowed_users: 'alice',
      allowed_critical_options: 'force-command',
      allowed_extensions: 'permit-pty',
      max_ttl: '1h',
      issuer_ref: 'ed',
    });
    const pub = (await newKey()).pub;
    await expect400('ssh/sign/strict', { public_key: pub, valid_principals: 'root' }, 'valid_principals');
    await expect400('ssh/sign/strict', { public_key: pub }, 'valid_principals');
    await expect400('ssh/sign/strict', { public_key: pub, valid_principals: 'alice', cert_type: 'host' }, 'cert_type');
    await expect400('ssh/sign/strict', { public_key: pub, valid_principals: 'alice', key_id: 'me' }, 'key_id');
    await expect400('ssh/sign/strict', { public_key: pub, valid_principals: 'alice', ttl: '2h' }, 'ttl');
    await expect400('ssh/sign/strict', { public_key: pub, valid_principals: 'alice', critical_options: { 'source-address': '10.0.0.1' } }, 'critical_options');
    await expect400('ssh/sign/strict', { public_key: pub, valid_principals: 'alice', extensions: { 'permit-port-forwarding': '' } }, 'extensions');
    await expect400('ssh/sign/strict', { public_key: 'ssh-ed25519 garbage' }, 'public_key');
    await ok('POST', 'ssh/roles/lengths', { key_type: 'ca', allow_user_certificates: true, allowed_users: '*', allowed_user_key_lengths: { rsa: [3072] }, issuer_ref: 'ed' });
    await expect400('ssh/sign/lengths', { public_key: pub, valid_principals: 'x' }, 'public_key');
    await ok('POST', 'ssh/roles/alg', { key_type: 'ca', allow_user_certificates: true, allowed_users: '*', algorithm_signer: 'rsa-sha2-512', issuer_ref: 'ed' });
    await expect400('ssh/sign/alg', { public_key: pub, valid_principals: 'x' }, 'algorithm_signer');
    await ok('POST', 'ssh/roles/nohost', { key_type: 'ca', allow_host_certificates: true, allowed_domains: 'example.com', issuer_ref: 'ed' });
    await expect400('ssh/sign/nohost', { public_key: pub, cert_type: 'host', valid_principals: 'example.com' }, 'valid_principals');
    await expect400('ssh/sign/nohost', { public_key: pub, cert_type: 'host', valid_principals: 'a.example.com' }, 'valid_principals');
    await ok('POST', 'ssh/roles/missing-issuer', { key_type: 'ca', allow_user_certificates: true, allowed_users: '*', issuer_ref: 'nope' });
    await expect400('ssh/sign/missing-issuer', { public_key: pub, valid_principals: 'x' }, 'issuer_ref');
    // Role writes.
    await expect400('ssh/roles/bad', { key_type: 'ca' }, 'allow_user_certificates');
    await expect400('ssh/roles/bad', { key_type: 'ca', allow_user_certificates: true, algorithm_signer: 'md5' }, 'algorithm_signer');
    await expect400('ssh/roles/bad', { key_type: 'ca', allow_user_certificates: true, ttl: '2h', max_ttl: '1h' }, 'ttl');
    await expect400('ssh/roles/bad', { key_type: 'ca', allow_user_certificates: 'maybe' }, 'allow_user_certificates');
    await expect400('ssh/roles/bad', { key_type: 'otp', cidr_list: '10.0.0.0/8' }, 'default_user');
    await expect400('ssh/roles/bad', { key_type: 'otp', default_user: 'u', cidr_list: 'not-a-cidr' }, 'cidr_list'); // without cidr_list it is a zero-address role
    await expect400('ssh/roles/bad', { key_type: 'otp', default_user: 'u', cidr_list: '10.0.0.0/8', exclude_cidr_list: 'x' }, 'exclude_cidr_list');
    await expect400('ssh/roles/bad', { key_type: 'nope' }, 'key_type');
    await expect400('ssh/config/ca', { key_type: 'ec', key_bits: 300 }, 'key_bits');
    await expect400('ssh/config/ca', { generate_signing_key: false, private_key: 'x' }, 'public_key');
    await expect400('ssh/issue/login', { key_type: 'rsa', key_bits: 1024 }, 'key_bits');
  });

  test('issuers over HTTP: LIST with key_info, the default, public_key without a token', async () => {
    const list = await ok('LIST', 'ssh/issuers');
    const info = list.body.data.key_info as Record<string, { issuer_name: string; is_default: boolean }>;
    expect(Object.values(info).map((i) => i.issuer_name).sort()).toEqual(['ed', 'p521', 'rsa']);
    const def = (await ok('GET', 'ssh/config/issuers')).body.data.default;
    expect(info[def]?.issuer_name).toBe('ed');
    const pub = await s.api('GET', 'ssh/public_key', undefined, { token: null });
    expect([pub.status, pub.headers.get('content-type')]).toEqual([200, expect.stringContaining('text/plain')]);
    expect(pub.text).toBe((await ok('GET', 'ssh/config/ca')).body.data.public_key);
    const roles = await ok('LIST', 'ssh/roles');
    expect(roles.body.data.key_info.login).toEqual({ key_type: 'ca', issuer_ref: 'ed' });
  });

  test('sign tells create from update for the ACL: an existing role needs update', async () => {
    await ok('PUT', 'sys/policies/acl/sign-update', { policy: 'path "ssh/sign/*" { capabilities = ["update"] }' });
    await ok('PUT', 'sys/policies/acl/sign-create', { policy: 'path "ssh/sign/*" { capabilities = ["create"] }' });
    const token = async (policy: string) => (await ok('POST', 'auth/token/create', { policies: [policy] })).body.auth.client_token as string;
    const pub = (await newKey()).pub;
    expect((await s.api('POST', 'ssh/sign/login', { public_key: pub }, { token: await token('sign-update') })).status).toBe(200);
    expect((await s.api('POST', 'ssh/sign/login', { public_key: pub }, { token: await token('sign-create') })).status).toBe(403);
  });

  test('without a default issuer, what needs one is a 400 saying so; DELETE config/ca removes every issuer', async () => {
    await ok('POST', 'ssh/roles/on-default', { key_type: 'ca', allow_user_certificates: true, allowed_users: '*' });
    await ok('POST', 'ssh/issuers/import/spare', { key_type: 'ed25519' });
    await ok('POST', 'ssh/roles/on-spare', { key_type: 'ca', allow_user_certificates: true, allowed_users: '*', issuer_ref: 'spare' });
    const pub = (await newKey()).pub;
    expect((await s.api('POST', 'ssh/sign/on-default', { public_key: pub, valid_principals: 'x' })).status).toBe(200);
    await ok('DELETE', 'ssh/issuer/default');
    expect((await ok('GET', 'ssh/config/issuers')).body.data.default).toBe('');
    for (const r of [await s.api('GET', 'ssh/public_key', undefined, { token: null }), await s.api('GET', 'ssh/config/ca'), await s.api('POST', 'ssh/sign/on-default', { public_key: pub, valid_principals: 'x' })]) {
      expect(r.status).toBe(400);
      expect(r.body.errors.join(' ')).toMatch(/no default issuer/);
    }
    // A role naming its issuer still signs; then config/ca is deleted with every issuer.
    expect((await s.api('POST', 'ssh/sign/on-spare', { public_key: pub, valid_principals: 'x' })).status).toBe(200);
    await ok('DELETE', 'ssh/config/ca');
    expect((await s.api('LIST', 'ssh/issuers')).status).toBe(404);
    const gone = await s.api('POST', 'ssh/sign/on-spare', { public_key: pub, valid_principals: 'x' });
    expect([gone.status, gone.body.errors.join(' ')]).toEqual([400, expect.stringContaining('issuer_ref')]);
  });
});

describe('one-time passwords', () => {
  const verify = (otp: string, token: string | null = null) => s.api('POST', 'ssh/verify', { otp }, { token });

  beforeAll(async () => {
    await ok('POST', 'ssh/roles/otp', { key_type: 'otp', default_user: 'admin', cidr_list: '127.0.0.0/8,10.0.0.0/8', exclude_cidr_list: '10.1.0.0/16', port: 2222 });
    expect((await ok('GET', 'ssh/roles/otp')).body.data).toMatchObject({ key_type: 'otp', default_user: 'admin', cidr_list: '127.0.0.0/8,10.0.0.0/8', port: 2222 });
  });

  test('two tokens racing to verify the same OTP: exactly one succeeds', async () => {
    await ok('PUT', 'sys/policies/acl/verifier', { policy: 'path "ssh/verify" { capabilities = ["update"] }' });
    const tokens = await Promise.all([1, 2].map(async () => (await ok('POST', 'auth/token/create', { policies: ['verifier'] })).body.auth.client_token as string));
    for (let round = 0; round < 5; round++) {
      const creds = await ok('POST', 'ssh/creds/otp', { ip: '127.0.0.1' });
      const otp = creds.body.data.key as string;
      const results = await Promise.all(tokens.map((t) => verify(otp, t)));
      expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
      const winner = results.find((r) => r.status === 200)!;
      expect(winner.body.data).toMatchObject({ username: 'admin', ip: '127.0.0.1' });
      expect(results.find((r) => r.status === 400)!.body.errors).toEqual(['OTP not found']);
    }
  });

  test('creds: a lease with ip, key, key_type, port, username; checks of ip and username; lookup', async () => {
    const creds = await ok('POST', 'ssh/creds/otp', { ip: '10.2.3.4' });
    expect(creds.body.lease_id).toMatch(/^ssh\/creds\/otp\//);
    expect(creds.body.renewable).toBe(false);
    expect(creds.body.data).toEqual({ ip: '10.2.3.4', key: expect.any(String), key_type: 'otp', port: 2222, username: 'admin' });
    await expect400('ssh/creds/otp', { ip: '10.1.0.5' }, 'ip');
    await expect400('ssh/creds/otp', { ip: '192.168.0.1' }, 'ip');
    await expect400('ssh/creds/otp', {}, 'ip');
    await expect400('ssh/creds/otp', { ip: '10.2.3.4', username: 'root' }, 'username');
    expect((await ok('POST', 'ssh/lookup', { ip: '10.2.3.4' })).body.data.roles).toEqual(['otp']);
    expect((await ok('POST', 'ssh/lookup', { ip: '10.1.0.5' })).body.data.roles).toEqual([]);
    await expect400('ssh/lookup', { ip: 'x' }, 'ip');
    // A zero-address role accepts any address.
    await ok('POST', 'ssh/roles/anywhere', { key_type: 'otp', default_user: 'u', cidr_list: '10.0.0.0/8' });
    await ok('POST', 'ssh/config/zeroaddress', { roles: 'anywhere' });
    expect((await ok('GET', 'ssh/config/zeroaddress')).body.data.roles).toEqual(['anywhere']);
    expect((await ok('POST', 'ssh/creds/anywhere', { ip: '192.168.7.7' })).body.data.ip).toBe('192.168.7.7');
    await ok('DELETE', 'ssh/config/zeroaddress');
    expect((await s.api('GET', 'ssh/config/zeroaddress')).status).toBe(404);
    expect((await ok('DELETE', 'ssh/tidy/dynamic-keys')).body.data.message).toBe('Successfully deleted 0 keys');
  });

  test('sys/leases: lookup, renew refused, revoke and revoke-prefix delete the OTPs', async () => {
    const issue = async () => {
      const r = await ok('POST', 'ssh/creds/otp', { ip: '127.0.0.2' });
      return { lease: r.body.lease_id as string, otp: r.body.data.key as string };
    };
    const a = await issue();
    const looked = await ok('POST', 'sys/leases/lookup', { lease_id: a.lease });
    expect(looked.body.data).toMatchObject({ id: a.lease, renewable: false });
    const renew = await s.api('POST', 'sys/leases/renew', { lease_id: a.lease });
    expect(renew.status).toBe(400);
    expect(renew.body.errors.join(' ')).toMatch(/not renewable/);
    await ok('POST', 'sys/leases/revoke', { lease_id: a.lease, sync: true });
    expect((await verify(a.otp)).status).toBe(400);
    expect((await s.api('POST', 'sys/leases/lookup', { lease_id: a.lease })).status).toBe(400);

    const many = [await issue(), await issue(), await issue()];
    await ok('POST', 'sys/leases/revoke-prefix/ssh/creds/otp', { sync: true });
    for (const m of many) {
      expect((await verify(m.otp)).body.errors).toEqual(['OTP not found']);
      expect((await s.api('POST', 'sys/leases/lookup', { lease_id: m.lease })).status).toBe(400);
    }
  });

  test('the OTP never appears in plain text in the output, the audit log or storage', async () => {
    const creds = await ok('POST', 'ssh/creds/otp', { ip: '127.0.0.3' });
    const otp = creds.body.data.key as string;
    expect((await verify(otp)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    expect(s.output()).not.toContain(otp);
    const audit = readFileSync(auditFile, 'utf8');
    expect(audit).toContain('ssh/verify');
    expect(audit).not.toContain(otp);
    const files: string[] = [];
    const walk = (d: string) => {
      for (const f of readdirSync(d)) {
        const p = join(d, f);
        const st = statSync(p);
        if (st.isDirectory()) walk(p);
        else if (st.isFile()) files.push(p);
      }
    };
    walk(s.dataDir);
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expect({ f, leaked: readFileSync(f).includes(otp) }).toEqual({ f, leaked: false });
  });
});
