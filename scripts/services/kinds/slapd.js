/**
 * A private OpenLDAP slapd (Debian `slapd` and `ldap-utils` when missing),
 * never the machine's own: a throwaway slapd.conf and mdb database in a
 * temporary directory, listening only on ldap://127.0.0.1:PORT/.
 *
 * The directory (base dc=strongroom,dc=test):
 *   cn=admin,<base>                    the rootdn (password in STRONGROOM_TEST_LDAP_ADMIN_PASSWORD)
 *   ou=services,<base>                 bind entries of engines; anything under it may
 *     cn=manager,ou=services,<base>      search, add, delete and set passwords (the ACL
 *                                        below), but is not the rootdn: a less
 *                                        privileged manager whose own password can be
 *                                        rotated. Tests that rotate a bind password
 *                                        add a bind entry of their own here.
 *   ou=users,<base>                    test users alice, bob, carol, dave, erin (password "<name>-initial")
 *   ou=dynamic,<base>                  where dynamic roles create their entries
 * Passwords of the initial entries are stored {SSHA}-hashed.
 *
 * TLS: a throwaway CA signs the server's certificate (for 127.0.0.1) and a
 * client certificate; slapd also listens on ldaps://127.0.0.1:PORT2/, offers
 * StartTLS on the plain port, and asks for a client certificate without
 * requiring one (a certificate it cannot verify ends the session). The PEM
 * files (ca.pem, client.pem, client-key.pem, rogue.pem, rogue-key.pem: a
 * self-signed client certificate) are in STRONGROOM_TEST_LDAP_TLS_DIR.
 */
'use strict';
const { spawn } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { ROOT, log, which, aptInstall, runAs, makeDataDir, freePort, waitForPort, portOpen, pidAlive, stopPid, tail } = require('../lib');

const BASE = 'dc=strongroom,dc=test';
const SCHEMA_DIR = '/etc/ldap/schema';
const MODULE_DIR = '/usr/lib/ldap';
const USERS = ['alice', 'bob', 'carol', 'dave', 'erin'];

function findSlapd() {
  const slapd = fs.existsSync('/usr/sbin/slapd') ? '/usr/sbin/slapd' : which('slapd');
  const slapadd = fs.existsSync('/usr/sbin/slapadd') ? '/usr/sbin/slapadd' : which('slapadd');
  const ok = slapd && slapadd && fs.existsSync(path.join(SCHEMA_DIR, 'inetorgperson.schema')) && which('ldapsearch');
  return ok ? { slapd, slapadd } : null;
}

const ssha = (password) => {
  const salt = crypto.randomBytes(8);
  const digest = crypto.createHash('sha1').update(password).update(salt).digest();
  return `{SSHA}${Buffer.concat([digest, salt]).toString('base64')}`;
};

/** Makes the TLS files with openssl when the machine has it, else node-forge (slower, pure JS). */
function makeTls(dir) {
  const tls = path.join(dir, 'tls');
  fs.mkdirSync(tls, { mode: 0o700 });
  const f = (name) => path.join(tls, name);
  if (which('openssl')) {
    const ossl = (args) => runAs(null, 'openssl', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const days = ['-days', '7'];
    ossl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('ca-key.pem'), '-out', f('ca.pem'), ...days, '-subj', '/CN=strongroom test ldap CA']);
    const leaf = (name, cn, ext) => {
      fs.writeFileSync(f(`${name}.ext`), ext);
      ossl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', f(`${name}-key.pem`), '-out', f(`${name}.csr`), '-subj', `/CN=${cn}`]);
      ossl(['x509', '-req', '-in', f(`${name}.csr`), '-CA', f('ca.pem'), '-CAkey', f('ca-key.pem'), '-CAcreateserial', '-out', f(`${name}.pem`), ...days, '-extfile', f(`${name}.ext`)]);
    };
    leaf('server', '127.0.0.1', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
    leaf('client', 'strongroom test client', 'extendedKeyUsage=clientAuth\n');
    ossl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('rogue-key.pem'), '-out', f('rogue.pem'), ...days, '-subj', '/CN=rogue client']);
    return tls;
  }
  const forge = require(require.resolve('node-forge', { paths: [ROOT, path.join(ROOT, 'test')] }));
  const keyPair = () => {
    const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs1', format: 'pem' } });
    return { pem: privateKey, pub: forge.pki.publicKeyFromPem(publicKey), priv: forge.pki.privateKeyFromPem(privateKey) };
  };
  const cert = (cn, kp, issuer, kind) => {
    const c = forge.pki.createCertificate();
    c.publicKey = kp.pub;
    c.serialNumber = '0' + crypto.randomBytes(8).toString('hex');
    c.validity.notBefore = new Date(Date.now() - 3600_000);
    c.validity.notAfter = new Date(Date.now() + 7 * 86400_000);
    c.setSubject([{ name: 'commonName', value: cn }]);
    c.setIssuer(issuer ? issuer.cert.subject.attributes : [{ name: 'commonName', value: cn }]);
    const ext = [{ name: 'basicConstraints', cA: kind === 'ca' }];
    if (kind === 'ca') ext.push({ name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true });
    else ext.push({ name: 'extKeyUsage', serverAuth: kind === 'server', clientAuth: kind !== 'server' });
    if (kind === 'server') ext.push({ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }, { type: 2, value: 'localhost' }] });
    c.setExtensions(ext);
    c.sign(issuer ? issuer.kp.priv : kp.priv, forge.md.sha256.create());
    return { cert: c, kp };
  };
  const write = (name, c) => {
    fs.writeFileSync(f(`${name}.pem`), forge.pki.certificateToPem(c.cert));
    fs.writeFileSync(f(`${name}-key.pem`), c.kp.pem, { mode: 0o600 });
  };
  const ca = cert('strongroom test ldap CA', keyPair(), null, 'ca');
  write('ca', ca);
  write('server', cert('127.0.0.1', keyPair(), ca, 'server'));
  write('client', cert('strongroom test client', keyPair(), ca, 'client'));
  write('rogue', cert('rogue client', keyPair(), null, 'client'));
  return tls;
}

function slapdConf(dir, adminPassword) {
  const services = `ou=services,${BASE}`;
  const modules = fs.existsSync(path.join(MODULE_DIR, 'back_mdb.so')) ? `modulepath ${MODULE_DIR}\nmoduleload back_mdb\n` : '';
  return `# Throwaway configuration of a private test slapd (scripts/services/kinds/slapd.js).
include ${SCHEMA_DIR}/core.schema
include ${SCHEMA_DIR}/cosine.schema
include ${SCHEMA_DIR}/inetorgperson.schema
include ${SCHEMA_DIR}/nis.schema
pidfile ${dir}/slapd.pid
argsfile ${dir}/slapd.args
${modules}sizelimit unlimited
TLSCACertificateFile ${dir}/tls/ca.pem
TLSCertificateFile ${dir}/tls/server.pem
TLSCertificateKeyFile ${dir}/tls/server-key.pem
TLSVerifyClient try
database mdb
maxsize 1073741824
suffix "${BASE}"
rootdn "cn=admin,${BASE}"
rootpw ${ssha(adminPassword)}
directory ${dir}/data
dbnosync
index objectClass eq
index cn,uid eq
# Bind entries under ou=services manage everything but the rootdn; an entry may
# change its own password; nobody reads a password.
access to attrs=userPassword
  by dn.children="${services}" write
  by self write
  by anonymous auth
  by * none
access to *
  by dn.children="${services}" write
  by users read
  by * none
`;
}

function initialLdif(managerPassword) {
  const entry = (dn, lines) => `dn: ${dn}\n${lines.join('\n')}\n`;
  const ou = (name) => entry(`ou=${name},${BASE}`, ['objectClass: organizationalUnit', `ou: ${name}`]);
  const person = (cn, ouName, password) =>
    entry(`cn=${cn},ou=${ouName},${BASE}`, ['objectClass: inetOrgPerson', `cn: ${cn}`, `sn: ${cn}`, `uid: ${cn}`, `userPassword: ${ssha(password)}`]);
  return [
    entry(BASE, ['objectClass: dcObject', 'objectClass: organization', 'dc: strongroom', 'o: Strongroom tests']),
    ou('services'),
    ou('users'),
    ou('dynamic'),
    person('manager', 'services', managerPassword),
    ...USERS.map((u) => person(u, 'users', `${u}-initial`)),
  ].join('\n');
}

async function start(ld) {
  const logFile = path.join(ld.dataDir, 'slapd.log');
  const out = fs.openSync(logFile, 'a');
  // -d 0: stay in the foreground (the pid is ours to stop) with no debug output.
  const child = spawn(ld.slapd, ['-d', '0', '-f', path.join(ld.dataDir, 'slapd.conf'), '-h', `ldap://127.0.0.1:${ld.port}/ ldaps://127.0.0.1:${ld.tlsPort}/`], {
    detached: true,
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  child.unref();
  ld.pid = child.pid;
  await waitForPort(ld.port, { pid: ld.pid, name: 'slapd', why: () => tail(logFile) });
  await waitForPort(ld.tlsPort, { pid: ld.pid, name: 'slapd (ldaps)', why: () => tail(logFile) });
}

async function up() {
  let found = findSlapd();
  if (!found) {
    aptInstall(['slapd', 'ldap-utils'], 'OpenLDAP (slapd, ldap-utils) not found');
    found = findSlapd();
    if (!found) throw new Error('slapd still not found after installing');
  }
  const dataDir = makeDataDir('strongroom-slapd-');
  fs.mkdirSync(path.join(dataDir, 'data'), { mode: 0o700 });
  const tlsDir = makeTls(dataDir);
  const adminPassword = crypto.randomBytes(18).toString('hex');
  const managerPassword = crypto.randomBytes(18).toString('hex');
  fs.writeFileSync(path.join(dataDir, 'slapd.conf'), slapdConf(dataDir, adminPassword), { mode: 0o600 });
  const ldif = path.join(dataDir, 'init.ldif');
  fs.writeFileSync(ldif, initialLdif(managerPassword), { mode: 0o600 });
  // Loaded offline, before the server listens: no window where the tree is half there.
  runAs(null, found.slapadd, ['-q', '-f', path.join(dataDir, 'slapd.conf'), '-l', ldif], { stdio: ['ignore', 'pipe', 'pipe'] });
  fs.rmSync(ldif, { force: true });
  const ld = { slapd: found.slapd, dataDir, port: await freePort(), tlsPort: await freePort(), base: BASE };
  while (ld.tlsPort === ld.port) ld.tlsPort = await freePort();
  await start(ld);
  ld.url = `ldap://127.0.0.1:${ld.port}`;
  ld.vars = {
    STRONGROOM_TEST_LDAP_BASE: BASE,
    STRONGROOM_TEST_LDAPS_URL: `ldaps://127.0.0.1:${ld.tlsPort}`,
    STRONGROOM_TEST_LDAP_TLS_DIR: tlsDir,
    STRONGROOM_TEST_LDAP_ADMIN_DN: `cn=admin,${BASE}`,
    STRONGROOM_TEST_LDAP_ADMIN_PASSWORD: adminPassword,
    STRONGROOM_TEST_LDAP_MANAGER_DN: `cn=manager,ou=services,${BASE}`,
    STRONGROOM_TEST_LDAP_MANAGER_PASSWORD: managerPassword,
    // A test on a dedicated instance may freeze it (SIGSTOP) to catch an operation in flight.
    STRONGROOM_TEST_LDAP_PID: String(ld.pid),
  };
  log(`slapd (${found.slapd}) on 127.0.0.1:${ld.port}, base ${BASE}, data in ${dataDir}`);
  return ld;
}

async function down(ld) {
  await stopPid(ld.pid).catch((err) => log(`stopping slapd: ${err.message}`));
  fs.rmSync(ld.dataDir, { recursive: true, force: true });
}

module.exports = {
  env: 'STRONGROOM_TEST_LDAP_URL',
  up,
  down,
  running: async (ld) => pidAlive(ld.pid) && (await portOpen(ld.port)),
  stop: (ld) => stopPid(ld.pid),
  start,
};
