/**
 * mysql-database-plugin as a real process, through the SDK's client, against
 * a real MySQL/MariaDB (test/helpers/databases.ts): every credential it
 * issues, changes or revokes is checked by logging in with mysql2.
 */
import { resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import * as mysql from 'mysql2/promise';
import * as database from '@strongroom/sdk-plugin/database';
import { caught, loginFailure, mysqlUrl, newUserRequest, testPassword, withCredentials } from '../helpers/databases';

const PLUGIN = resolve(__dirname, '../../plugins/database-mysql/dist/plugin.js');
const CREATE = [`CREATE USER '{{name}}'@'%' IDENTIFIED BY '{{password}}'; GRANT SELECT ON mysql.user TO '{{name}}'@'%';`];

let admin: URL;
let adminConn: mysql.Connection;
let proc: database.DatabasePluginProcess;
let n = 0;

async function login(username: string, password: string): Promise<string> {
  const c = await mysql.createConnection(withCredentials(admin.toString(), username, password));
  try {
    const [rows] = await c.query('SELECT CURRENT_USER() AS u');
    return String((rows as { u: string }[])[0]!.u).split('@')[0]!;
  } finally {
    await c.end().catch(() => undefined);
  }
}
const loginFails = (username: string, password: string) => loginFailure(() => login(username, password));
const userCount = async (like: string) => {
  const [rows] = await adminConn.query('SELECT count(*) AS n FROM mysql.user WHERE User LIKE ?', [like]);
  return Number((rows as { n: number }[])[0]!.n);
};
const password = testPassword;

/** A fresh admin account for a connection (so rotating its password touches nobody else) and a client on the plugin. */
async function connection(over: Record<string, unknown> = {}, pw = password()) {
  const user = `sr_admin_${process.pid}_${++n}`;
  await adminConn.query(`CREATE USER ?@'%' IDENTIFIED BY ?`, [user, pw]);
  await adminConn.query(`GRANT ALL PRIVILEGES ON *.* TO ?@'%' WITH GRANT OPTION`, [user]);
  const client = database.createDatabasePluginClient(proc.address, `conn-${n}`);
  // Vault documents the Go driver's DSN for this plugin; both spellings are accepted.
  const config = { connection_url: `{{username}}:{{password}}@tcp(${admin.host})/`, username: user, password: pw, ...over };
  return { user, pw, client, config };
}

const newUserReq = (roleName: string, pw: string, over: Partial<database.NewUserRequest> = {}) => newUserRequest(CREATE, roleName, pw, over);

beforeAll(async () => {
  admin = new URL(mysqlUrl());
  adminConn = await mysql.createConnection(admin.toString());
  proc = await database.startDatabasePluginProcess({ args: [PLUGIN] });
});
afterAll(async () => {
  await proc?.stop();
  await adminConn?.end();
});

test('Type is mysql; Initialize verifies with a Go DSN and with a mysql:// URL', async () => {
  const { client, config } = await connection();
  expect(await client.type()).toBe('mysql');
  const r = await client.initialize({ config, verifyConnection: true });
  expect(r.config).toMatchObject({ ...config, max_open_connections: 4, max_idle_connections: 4, max_connection_lifetime: 0 });
  await client.initialize({ config: { ...config, connection_url: `mysql://{{username}}:{{password}}@${admin.host}/mysql` }, verifyConnection: true });
  const bad = await caught(client.initialize({ config: { ...config, connection_url: 'not a dsn' }, verifyConnection: false }));
  expect([bad.status, bad.message]).toEqual([400, expect.stringMatching(/^field "connection_url": must be mysql:\/\//)]);
});

test('Initialize with a wrong password is a 400 without the password', async () => {
  const { client, config } = await connection();
  const wrong = 'Wrong-Pass-0123456789';
  const err = await caught(client.initialize({ config: { ...config, password: wrong }, verifyConnection: true }));
  expect(err.status).toBe(400);
  expect(err.message).toMatch(/^error verifying connection: Access denied for user/);
  expect(err.message).not.toContain(wrong);
  expect(proc.stderr()).not.toContain(wrong);
});

test("NewUser: Vault's mysql username template (32 characters) and a real login", async () => {
  const { client, config } = await connection();
  await client.initialize({ config, verifyConnection: true });
  const pw = password();
  const { username } = await client.newUser(newUserReq('readonly-role', pw));
  expect(username).toMatch(/^v-token-readonly-r-[A-Za-z0-9]{13}$/);
  expect(await login(username, pw)).toBe(username);
});

test('UpdateUser: the new password logs in, the old one no longer does; expiration runs renew statements or nothing', async () => {
  const { client, config } = await connection();
  await client.initialize({ config, verifyConnection: false });
  const pw1 = password();
  const { username } = await client.newUser(newUserReq('upd', pw1));
  const pw2 = password();
  await client.updateUser({ username, credentialType: 'password', password: { newPassword: pw2, statements: { commands: [] } } });
  expect(await login(username, pw2)).toBe(username);
  expect(await loginFails(username, pw1)).toBe('ER_ACCESS_DENIED_ERROR');

  const later = Math.floor(Date.now() / 1000) + 86400;
  await client.updateUser({ username, credentialType: 'password', expiration: { newExpiration: later, statements: { commands: [] } } });
  await client.updateUser({
    username,
    credentialType: 'password',
    expiration: { newExpiration: later, statements: { commands: [`ALTER USER '{{name}}'@'%' WITH MAX_QUERIES_PER_HOUR 7`] } },
  });
  const [rows] = await adminConn.query('SELECT max_questions AS q FROM mysql.user WHERE User = ?', [username]);
  expect(Number((rows as { q: number }[])[0]!.q)).toBe(7);
});

test('DeleteUser: the default revocation drops the user and login fails; twice is fine; given statements are used', async () => {
  const { client, config } = await connection();
  await client.initialize({ config, verifyConnection: false });
  const pw = password();
  const { username } = await client.newUser(newUserReq('del', pw));
  await client.deleteUser({ username, statements: { commands: [] } });
  expect(await userCount(username)).toBe(0);
  expect(await loginFails(username, pw)).toBe('ER_ACCESS_DENIED_ERROR');
  await client.deleteUser({ username, statements: { commands: [] } });

  const other = await client.newUser(newUserReq('del2', pw));
  await client.deleteUser({ username: other.username, statements: { commands: [`ALTER USER '{{name}}'@'%' ACCOUNT LOCK`] } });
  expect(await userCount(other.username)).toBe(1);
  expect(await loginFails(other.username, pw)).not.toBe('logged in');
});

test('rotating the root credential: old password fails, new one works, the plugin keeps working', async () => {
  const { user, pw, client, config } = await connection();
  await client.initialize({ config, verifyConnection: true });
  const rotated = password();
  await client.updateUser({ username: user, credentialType: 'password', password: { newPassword: rotated, statements: { commands: [] } } });
  expect(await loginFails(user, pw)).toBe('ER_ACCESS_DENIED_ERROR');
  expect(await login(user, rotated)).toBe(user);
  const issued = password();
  const { username } = await client.newUser(newUserReq('after-rot', issued));
  expect(await login(username, issued)).toBe(username);
  expect(proc.stderr()).not.toContain(rotated);
});

test('a failing creation statement runs the rollback statements (CREATE USER commits on its own) and is a 400', async () => {
  const { client, config } = await connection();
  await client.initialize({ config, verifyConnection: false });
  const pw = password();
  const before = await userCount('v-token-rb-%');
  const err = await caught(
    client.newUser(
      newUserReq('rb', pw, {
        statements: { commands: [...CREATE, `GRANT SELECT ON no_such_db.no_such_table TO '{{name}}'@'%'`] },
        rollbackStatements: { commands: [`DROP USER IF EXISTS '{{name}}'@'%'`] },
      }),
    ),
  );
  expect(err.status).toBe(400);
  expect(err.message).toMatch(/^failed to create user: Table 'no_such_db.no_such_table' doesn't exist$/);
  expect(await userCount('v-token-rb-%')).toBe(before);
});

test('a syntax error is a 400 whose message holds neither the password nor the statement', async () => {
  const { client, config } = await connection();
  await client.initialize({ config, verifyConnection: false });
  const pw = password();
  const err = await caught(client.newUser(newUserReq('syn', pw, { statements: { commands: [`CREATE USER '{{name}}'@'%' IDENTIFIED BY '{{password}}' '{{password}}'`] } })));
  expect(err.status).toBe(400);
  expect(err.message).toMatch(/^failed to create user: You have an error in your SQL syntax; .* near \[statement withheld\] at line 1$/);
  expect(err.message).not.toContain(pw.slice(0, 8));
  expect(proc.stderr()).not.toContain(pw);
});

test('unsupported credential types and unsafe values are 400s', async () => {
  const { client, config } = await connection();
  await client.initialize({ config, verifyConnection: false });
  const rsa = await caught(client.newUser(newUserReq('k', password(), { credentialType: 'rsa_private_key', publicKey: 'PEM' })));
  expect([rsa.status, rsa.message]).toEqual([400, 'credential_type rsa_private_key is not supported by the mysql plugin']);
  const quote = await caught(client.newUser(newUserReq('k', `x'; DROP USER root; --`)));
  expect(quote.status).toBe(400);
  expect(quote.message).toMatch(/^password contains characters/);
});

test('a password with URL-special characters works in both URL spellings', async () => {
  const tricky = `p@ss/w:rd%$&-${randomBytes(4).toString('hex')}`;
  const { client, config } = await connection({ username_template: '{{ .RoleName }}_{{ random 6 }}' }, tricky);
  await client.initialize({ config, verifyConnection: true });
  await client.initialize({ config: { ...config, connection_url: `mysql://{{username}}:{{password}}@${admin.host}/` }, verifyConnection: true });
  const pw = password();
  const { username } = await client.newUser(newUserReq('tmpl', pw));
  expect(username).toMatch(/^tmpl_[A-Za-z0-9]{6}$/);
  expect(await login(username, pw)).toBe(username);
});
