/**
 * postgresql-database-plugin as a real process, through the SDK's client,
 * against a real PostgreSQL (test/helpers/databases.ts): every credential it
 * issues, changes or revokes is checked by logging in with the pg driver.
 */
import { resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { StrongroomError } from '@strongroom/sdk-plugin';
import * as database from '@strongroom/sdk-plugin/database';
import { caught, loginFailure, newUserRequest, postgresUrl, testPassword, withCredentials } from '../helpers/databases';

const PLUGIN = resolve(__dirname, '../../plugins/database-postgresql/dist/plugin.js');
const TEMPLATE_URL = (admin: URL) => `postgresql://{{username}}:{{password}}@${admin.host}${admin.pathname}`;
const CREATE = [`CREATE ROLE "{{name}}" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}'; GRANT CONNECT ON DATABASE postgres TO "{{name}}";`];

let admin: URL;
let adminClient: Client;
let proc: database.DatabasePluginProcess;
let n = 0;

async function login(username: string, password: string): Promise<string> {
  const c = new Client({ connectionString: withCredentials(admin.toString(), username, password) });
  try {
    await c.connect();
    const r = await c.query<{ u: string }>('SELECT current_user AS u');
    return r.rows[0]!.u;
  } finally {
    await c.end().catch(() => undefined);
  }
}
const loginFails = (username: string, password: string) => loginFailure(() => login(username, password));
const roleCount = async (like: string) =>
  Number((await adminClient.query<{ n: string }>('SELECT count(*) AS n FROM pg_roles WHERE rolname LIKE $1', [like])).rows[0]!.n);
const validUntil = async (role: string) =>
  (await adminClient.query<{ v: Date | null }>('SELECT rolvaliduntil AS v FROM pg_roles WHERE rolname = $1', [role])).rows[0]?.v ?? null;
const password = testPassword;

/** A fresh superuser for a connection (so rotating its password touches nobody else) and a client on the plugin. */
async function connection(over: Record<string, unknown> = {}, pw = password()) {
  const user = `sr_admin_${process.pid}_${++n}`;
  await adminClient.query(`CREATE ROLE "${user}" WITH LOGIN SUPERUSER PASSWORD '${pw.replace(/'/g, "''")}'`);
  const client = database.createDatabasePluginClient(proc.address, `conn-${n}`);
  const config = { connection_url: TEMPLATE_URL(admin), username: user, password: pw, ...over };
  return { user, pw, client, config };
}

const newUserReq = (roleName: string, pw: string, over: Partial<database.NewUserRequest> = {}) => newUserRequest(CREATE, roleName, pw, over);

beforeAll(async () => {
  admin = new URL(postgresUrl());
  adminClient = new Client({ connectionString: admin.toString() });
  await adminClient.connect();
  proc = await database.startDatabasePluginProcess({ args: [PLUGIN] });
});
afterAll(async () => {
  await proc?.stop();
  await adminClient?.end();
});

test('Type is postgresql; Initialize verifies and normalises the config', async () => {
  const { client, config } = await connection();
  expect(await client.type()).toBe('postgresql');
  const r = await client.initialize({ config, verifyConnection: true });
  expect(r.config).toMatchObject({ ...config, max_open_connections: 4, max_idle_connections: 4, max_connection_lifetime: 0, password_authentication: 'password' });
});

test('Initialize with a wrong password is a 400 that names the failure and not the password', async () => {
  const { client, config } = await connection();
  const wrong = 'Wrong-Pass-0123456789';
  const err = await caught(client.initialize({ config: { ...config, password: wrong }, verifyConnection: true }));
  expect(err).toBeInstanceOf(StrongroomError);
  expect(err.status).toBe(400);
  expect(err.message).toMatch(/^error verifying connection: .*password authentication failed/);
  expect(err.message).not.toContain(wrong);
  expect(proc.stderr()).not.toContain(wrong);
});

test('bad config fields are 400s naming the field', async () => {
  const { client, config } = await connection();
  expect((await caught(client.initialize({ config: { ...config, max_open_connections: 'lots' }, verifyConnection: false }))).message).toBe(
    'field "max_open_connections": invalid integer',
  );
  expect((await caught(client.initialize({ config: { ...config, connection_url: 'host=x user=y' }, verifyConnection: false }))).message).toMatch(
    /^field "connection_url": must be a URL/,
  );
  expect((await caught(client.initialize({ config: { ...config, password_authentication: 'md5' }, verifyConnection: false }))).message).toMatch(
    /^field "password_authentication"/,
  );
});

test('NewUser: the default username template, a real login, and VALID UNTIL from {{expiration}}', async () => {
  const { client, config } = await connection();
  await client.initialize({ config, verifyConnection: true });
  const pw = password();
  const expiration = Math.floor(Date.now() / 1000) + 7200;
  const { username } = await client.newUser(newUserReq('readonly-role', pw, { expiration }));
  expect(username).toMatch(/^v-token-readonly-[A-Za-z0-9]{20}-\d{10}$/);
  expect(await login(username, pw)).toBe(username);
  expect((await validUntil(username))?.getTime()).toBe(expiration * 1000);
});

test('UpdateUser: a new password logs in and the old one no longer does; renew moves VALID UNTIL', async () => {
  const { client, config } = await connection();
  await client.initialize({ config, verifyConnection: false });
  const pw1 = password();
  const { username } = await client.newUser(newUserReq('upd', pw1));
  const pw2 = password();
  await client.updateUser({ username, credentialType: 'password', password: { newPassword: pw2, statements: { commands: [] } } });
  expect(await login(username, pw2)).toBe(username);
  expect(await loginFails(username, pw1)).toBe('28P01');

  const later = Math.floor(Date.now() / 1000) + 86400;
  await client.updateUser({ username, credentialType: 'password', expiration: { newExpiration: later, statements: { commands: [] } } });
  expect((await validUntil(username))?.getTime()).toBe(later * 1000);
  // Custom renew statements are used when given.
  await client.updateUser({
    username,
    credentialType: 'password',
    expiration: { newExpiration: later, statements: { commands: [`ALTER ROLE "{{name}}" VALID UNTIL '2099-01-01 00:00:00+00'`] } },
  });
  expect((await validUntil(username))?.toISOString()).toBe('2099-01-01T00:00:00.000Z');

  const missing = await caught(client.updateUser({ username: 'no-such-role', credentialType: 'password', password: { newPassword: pw2, statements: { commands: [] } } }));
  expect([missing.status, missing.message]).toEqual([400, 'cannot update password for username "no-such-role": it does not exist']);
  expect((await caught(client.updateUser({ username, credentialType: 'password' }))).message).toBe('no changes requested');
});

test('DeleteUser with the default revocation: objects it owns are reassigned, the role is dropped, login fails; twice is fine', async () => {
  const { user, client, config } = await connection();
  await client.initialize({ config, verifyConnection: false });
  const pw = password();
  const { username } = await client.newUser(
    newUserReq('del', pw, { statements: { commands: [...CREATE, `GRANT CREATE ON SCHEMA public TO "{{name}}"`] } }),
  );
  const asUser = new Client({ connectionString: withCredentials(admin.toString(), username, pw) });
  await asUser.connect();
  const table = `t_${process.pid}_${n}`;
  await asUser.query(`CREATE TABLE ${table} (x int)`);
  await asUser.end();

  await client.deleteUser({ username, statements: { commands: [] } });
  expect(await roleCount(username)).toBe(0);
  expect(await loginFails(username, pw)).toBe('28P01');
  const owner = await adminClient.query<{ o: string }>('SELECT tableowner AS o FROM pg_tables WHERE tablename = $1', [table]);
  expect(owner.rows[0]?.o).toBe(user);
  await client.deleteUser({ username, statements: { commands: [] } });
});

test('DeleteUser runs the role\'s revocation statements when given', async () => {
  const { client, config } = await connection();
  await client.initialize({ config, verifyConnection: false });
  const pw = password();
  const { username } = await client.newUser(newUserReq('rev', pw));
  await client.deleteUser({ username, statements: { commands: [`ALTER ROLE "{{name}}" NOLOGIN`] } });
  expect(await roleCount(username)).toBe(1);
  expect(await loginFails(username, pw)).toBe('28000');
});

test('rotating the root credential: old password fails, new one works, the plugin keeps working', async () => {
  const { user, pw, client, config } = await connection();
  await client.initialize({ config, verifyConnection: true });
  const rotated = password();
  await client.updateUser({ username: user, credentialType: 'password', password: { newPassword: rotated, statements: { commands: [] } } });
  expect(await loginFails(user, pw)).toBe('28P01');
  expect(await login(user, rotated)).toBe(user);
  const issued = password();
  const { username } = await client.newUser(newUserReq('after-rotate', issued));
  expect(await login(username, issued)).toBe(username);
  await client.deleteUser({ username, statements: { commands: [] } });
  expect(proc.stderr()).not.toContain(rotated);
});

test('a failing creation statement rolls the transaction back, runs rollback statements, and answers a 400 without the password', async () => {
  const { client, config } = await connection();
  await client.initialize({ config, verifyConnection: false });
  const pw = password();
  const before = await roleCount('v-token-rb-%');
  const marker = `rollback_marker_${process.pid}_${n}`;
  const err = await caught(
    client.newUser(
      newUserReq('rb', pw, {
        statements: { commands: [...CREATE, 'GRANT SELECT ON no_such_table TO "{{name}}"'] },
        rollbackStatements: { commands: [`CREATE ROLE ${marker}`] },
      }),
    ),
  );
  expect(err.status).toBe(400);
  expect(err.message).toBe('failed to create user: relation "no_such_table" does not exist');
  expect(await roleCount('v-token-rb-%')).toBe(before);
  expect(await roleCount(marker)).toBe(1);
  await adminClient.query(`DROP ROLE ${marker}`);
});

test('a syntax error is a 400 whose message holds neither the password nor the statement', async () => {
  const { client, config } = await connection();
  await client.initialize({ config, verifyConnection: false });
  const pw = password();
  // The server quotes the token it stopped at: here, the password.
  const err = await caught(client.newUser(newUserReq('syn', pw, { statements: { commands: [`CREATE ROLE "{{name}}" WITH LOGIN PASSWORD '{{password}}' '{{password}}'`] } })));
  expect(err.status).toBe(400);
  expect(err.message).toBe(`failed to create user: syntax error at or near "'[redacted]'"`);
  expect(err.message).not.toContain(pw);
  expect(err.message).not.toContain('CREATE ROLE');
  expect(proc.stderr()).not.toContain(pw);
});

test('unsupported credential types and unsafe values are 400s', async () => {
  const { client, config } = await connection();
  await client.initialize({ config, verifyConnection: false });
  const rsa = await caught(client.newUser(newUserReq('k', password(), { credentialType: 'rsa_private_key', publicKey: 'PEM' })));
  expect([rsa.status, rsa.message]).toEqual([400, 'credential_type rsa_private_key is not supported by the postgresql plugin']);
  const cert = await caught(client.newUser(newUserReq('k', password(), { credentialType: 'client_certificate' })));
  expect(cert.message).toBe('credential_type client_certificate is not supported by the postgresql plugin');
  const quote = await caught(client.newUser(newUserReq('k', `x'; DROP ROLE postgres; --`)));
  expect(quote.status).toBe(400);
  expect(quote.message).toMatch(/^password contains characters/);
  expect((await caught(client.newUser(newUserReq('k', password(), { statements: { commands: [' ; '] } })))).message).toBe(
    'creation statements are required (creation_statements)',
  );
});

test('username_template, URL escaping of credentials, and scram-sha-256 password_authentication', async () => {
  const tricky = `p@ss/w:rd-${randomBytes(4).toString('hex')}`;
  const { client, config } = await connection({ username_template: '{{ .RoleName | uppercase }}-{{ random 6 }}', password_authentication: 'scram-sha-256' }, tricky);
  await client.initialize({ config, verifyConnection: true });
  const pw = password();
  const { username } = await client.newUser(newUserReq('tmpl', pw));
  expect(username).toMatch(/^TMPL-[A-Za-z0-9]{6}$/);
  expect(await login(username, pw)).toBe(username);
  const stored = await adminClient.query<{ p: string }>('SELECT rolpassword AS p FROM pg_authid WHERE rolname = $1', [username]);
  expect(stored.rows[0]?.p).toMatch(/^SCRAM-SHA-256\$4096:/);

  // disable_escaping hands the credentials to the URL as they are: '/' then breaks the URL.
  const raw = await caught(client.initialize({ config: { ...config, disable_escaping: true }, verifyConnection: true }));
  expect(raw.status).toBe(400);
  expect(raw.message).not.toContain(tricky);
});

test('Close drops the connection: later calls say connection_not_initialized', async () => {
  const { client, config } = await connection();
  await client.initialize({ config, verifyConnection: false });
  await client.close();
  const err = await caught(client.newUser(newUserReq('closed', password())));
  expect(database.isConnectionNotInitialized(err)).toBe(true);
});
