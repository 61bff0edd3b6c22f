/**
 * The engine in-process over an in-memory fake of the database-plugin client
 * (the e2e tests in test/database/ use the real plugins and databases). The
 * fake keeps users and passwords like a database would and can be made to
 * fail or to "restart" (forget its initialized connections).
 */
import { defaultPasswordPolicy, satisfiesPolicy, StrongroomError } from '@strongroom/sdk-plugin';
import { createMemoryStorage, createTestBackend } from '@strongroom/sdk-plugin/testing';
import * as database from '@strongroom/sdk-plugin/database';
import { createDatabaseBackend } from './backend.js';
import type { DatabaseClientFactory } from './connections.js';

interface FakeDb {
  users: Map<string, { password: string; expiration: number; publicKey?: string }>;
  initialized: Map<string, Record<string, unknown>>;
  calls: string[];
  failNext: StrongroomError | null;
  /** The next updateUser is applied, then fails as if its reply was lost. */
  loseReply: boolean;
  down: boolean;
  nextUser: number;
  /** While set, updateUser waits for it (to interleave a tick with a rotation in progress). */
  hold?: Promise<void> | null;
}

function fakeDb(
  db: FakeDb = { users: new Map(), initialized: new Map(), calls: [], failNext: null, loseReply: false, down: false, nextUser: 1 },
): { db: FakeDb; factory: DatabaseClientFactory } {
  const guard = (id: string, op: string) => {
    db.calls.push(`${op} ${id}`);
    if (db.down) throw new StrongroomError('coded', 'database unreachable', { status: 502 });
    if (db.failNext) {
      const e = db.failNext;
      db.failNext = null;
      throw e;
    }
    if (op !== 'initialize' && !db.initialized.has(id)) throw new StrongroomError('connection_not_initialized', 'connection not initialized');
  };
  const factory: DatabaseClientFactory = (_address, id) => ({
    type: async () => 'fake',
    async initialize(req) {
      guard(id, 'initialize');
      if (req.verifyConnection && req.config.connection_url === 'bad') throw new StrongroomError('bad_request', 'cannot connect');
      // Verifying logs in: a root user the fake knows must give its password.
      const root = db.users.get(String(req.config.username));
      if (req.verifyConnection && root && root.password !== req.config.password) throw new StrongroomError('bad_request', 'password authentication failed');
      db.initialized.set(id, req.config);
      return { config: req.config };
    },
    async newUser(req) {
      guard(id, 'newUser');
      const username = `v-${req.usernameConfig.roleName}-${db.nextUser++}`;
      db.users.set(username, { password: req.password, expiration: req.expiration, ...(req.publicKey ? { publicKey: req.publicKey } : {}) });
      return { username };
    },
    async updateUser(req) {
      guard(id, 'updateUser');
      if (db.hold) await db.hold;
      const u = db.users.get(req.username);
      if (!u) throw new StrongroomError('bad_request', `no user ${req.username}`);
      if (req.password) u.password = req.password.newPassword;
      if (req.expiration) u.expiration = req.expiration.newExpiration;
      if (db.loseReply) {
        db.loseReply = false;
        throw new StrongroomError('unavailable', 'connection reset');
      }
    },
    async deleteUser(req) {
      guard(id, 'deleteUser');
      db.users.delete(req.username);
    },
    async close() {
      db.initialized.delete(id);
    },
  });
  return { db, factory };
}

const opened: Array<[string, string]> = [];
const system = {
  openDatabasePlugin: async (name: string, version: string): Promise<database.DatabasePluginAddress> => {
    if (version === 'v9.9.9') throw new StrongroomError('bad_request', 'plugin_version: version v9.9.9 is not registered');
    opened.push([name, version]);
    return { socketPath: '/nowhere', secret: 's', version: version || 'v0.1.0+builtin', builtin: version === '' };
  },
  defaultLeaseTtl: async () => 3600,
  maxLeaseTtl: async () => 7200,
  generatePasswordFromPolicy: async (name: string) => `policy-${name}-Aa1-xxxxxxxx`,
};

const CONN = { plugin_name: 'postgresql-database-plugin', connection_url: 'postgres://{{username}}:{{password}}@db/app', username: 'root', password: 'root-secret', allowed_roles: ['app', 'k', 'st*'] };

async function setup(now = { t: 1_700_000_000_000 }) {
  const { db, factory } = fakeDb();
  const storage = createMemoryStorage();
  const tb = await createTestBackend(createDatabaseBackend({ clientFactory: factory, now: () => now.t, rotationTimer: false }), { system, storage });
  return { db, tb, now, storage };
}

const errorOf = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    return e as StrongroomError;
  }
  throw new Error('expected an error');
};

describe('database engine: connections', () => {
  test('create vs update, read hides the password, list, delete', async () => {
    const { tb, db } = await setup();
    expect(await tb.writeOperation('config/main')).toBe('create');
    await tb.write('config/main', { ...CONN, max_open_connections: 4, custom_field: 'x' });
    expect(await tb.writeOperation('config/main')).toBe('update');
    expect(db.initialized.get('00000000-0000-4000-8000-000000000000/main')).toMatchObject({ password: 'root-secret', max_open_connections: 4, custom_field: 'x' });
    const read = (await tb.read('config/main'))?.data;
    expect(read).toEqual({
      plugin_name: 'postgresql-database-plugin',
      plugin_version: '',
      running_plugin_version: 'v0.1.0+builtin',
      verify_connection: true,
      allowed_roles: ['app', 'k', 'st*'],
      root_credentials_rotate_statements: [],
      password_policy: '',
      connection_details: { connection_url: 'postgres://{{username}}:{{password}}@db/app', username: 'root', max_open_connections: 4, custom_field: 'x' },
    });
    expect(JSON.stringify(read)).not.toContain('root-secret');
    // An update keeps what it does not send.
    await tb.write('config/main', { allowed_roles: '*' });
    expect((await tb.read('config/main'))?.data).toMatchObject({ allowed_roles: ['*'], plugin_name: 'postgresql-database-plugin' });
    expect((await tb.list('config'))?.data).toEqual({ keys: ['main'] });
    await tb.delete('config/main');
    expect(await tb.read('config/main')).toBeNull();
  });

  test('an inline URL password is masked on read', async () => {
    const { tb } = await setup();
    await tb.write('config/c', { plugin_name: 'mysql-database-plugin', connection_url: 'mysql://root:hunter2@db:3306/' });
    expect((await tb.read('config/c'))?.data?.connection_details).toEqual({ connection_url: 'mysql://root:*****@db:3306/' });
  });

  test('plugin_name is required; verify_connection failures are refused; an unregistered version is a 400 naming plugin_version', async () => {
    const { tb } = await setup();
    expect((await errorOf(tb.write('config/x', { connection_url: 'u' }))).message).toMatch(/plugin_name/);
    expect((await errorOf(tb.write('config/x', { ...CONN, connection_url: 'bad' }))).message).toBe('cannot connect');
    await tb.write('config/x', { ...CONN, connection_url: 'bad', verify_connection: false });
    const e = await errorOf(tb.write('config/y', { ...CONN, plugin_version: '9.9.9' }));
    expect([e.status, e.message]).toEqual([400, 'plugin_version: version v9.9.9 is not registered']);
    await tb.write('config/z', { ...CONN, plugin_version: '1.2.3' });
    expect((await tb.read('config/z'))?.data).toMatchObject({ plugin_version: 'v1.2.3', running_plugin_version: 'v1.2.3' });
    expect(opened).toContainEqual(['postgresql-database-plugin', 'v1.2.3']);
  });

  test('rotate-root sets a new root password that is stored, never returned, and used from then on', async () => {
    const { tb, db } = await setup();
    db.users.set('root', { password: 'root-secret', expiration: 0 });
    await tb.write('config/main', { ...CONN, root_rotation_statements: ["ALTER USER {{name}} WITH PASSWORD '{{password}}'"] });
    const res = await tb.write('rotate-root/main', {});
    expect(JSON.stringify(res ?? {})).not.toMatch(/password/);
    const pw = db.users.get('root')?.password as string;
    expect(pw).not.toBe('root-secret');
    expect(satisfiesPolicy(defaultPasswordPolicy(), pw)).toBe(true);
    expect(db.initialized.get('00000000-0000-4000-8000-000000000000/main')?.password).toBe(pw);
    expect(JSON.stringify((await tb.read('config/main'))?.data)).not.toContain(pw);
  });

  describe('rotate-root cut short (root-wal/<name>)', () => {
    const CONN_ID = '00000000-0000-4000-8000-000000000000/main';
    const storedConfig = async (storage: ReturnType<typeof createMemoryStorage>) =>
      JSON.parse(Buffer.from((await storage.get('config/main'))!).toString('utf8')) as { connection_details: Record<string, unknown> };
    const restart = (db: FakeDb, storage: ReturnType<typeof createMemoryStorage>, now: { t: number }) =>
      createTestBackend(createDatabaseBackend({ clientFactory: fakeDbFactoryOf(db), now: () => now.t, rotationTimer: false }), { system, storage });

    async function withRoot() {
      const s = await setup();
      s.db.users.set('root', { password: 'root-secret', expiration: 0 });
      await s.tb.write('config/main', CONN);
      await s.tb.write('roles/app', { db_name: 'main', creation_statements: ['C'] });
      return s;
    }

    test('a crash after the database change: after a restart the first use finishes it with the new password; reads never show it', async () => {
      const { tb, db, storage, now } = await withRoot();
      // The crash: the database took the new password, the batch that stores it (config + end of the entry) never happens.
      const batch = storage.batch;
      storage.batch = async (ops) => {
        if (ops.some((o) => o.key === 'config/main')) throw new Error('process killed');
        return batch(ops);
      };
      await errorOf(tb.write('rotate-root/main', {}));
      storage.batch = batch;
      const newPw = db.users.get('root')!.password;
      expect(newPw).not.toBe('root-secret');
      expect((await storedConfig(storage)).connection_details.password).toBe('root-secret');
      expect(await storage.get('root-wal/main')).not.toBeNull();

      const restarted = await restart(db, storage, now);
      const read = JSON.stringify(await restarted.read('config/main'));
      expect(read).not.toContain(newPw);
      expect(read).not.toContain('root-secret');
      // The first use settles it: the new password logs in, so it is kept.
      expect((await restarted.read('creds/app'))?.data?.username).toMatch(/^v-app-/);
      expect(db.initialized.get(CONN_ID)?.password).toBe(newPw);
      expect((await storedConfig(storage)).connection_details.password).toBe(newPw);
      expect(await storage.get('root-wal/main')).toBeNull();
      expect(JSON.stringify(await restarted.read('config/main'))).not.toContain(newPw);
    });

    test('a crash before the database change: reset keeps the stored password and drops the entry, answering nothing of it', async () => {
      const { tb, db, storage } = await withRoot();
      const walPw = 'never-set-Aa1-xxxxxxxx';
      await storage.put('root-wal/main', Buffer.from(JSON.stringify({ connection: 'main', username: 'root', password: walPw, started: 0 })));
      expect(JSON.stringify(await tb.read('config/main'))).not.toContain(walPw);
      const res = await tb.write('reset/main', {});
      expect(JSON.stringify(res ?? {})).not.toContain(walPw);
      expect(db.users.get('root')?.password).toBe('root-secret');
      expect(db.initialized.get(CONN_ID)?.password).toBe('root-secret');
      expect((await storedConfig(storage)).connection_details.password).toBe('root-secret');
      expect(await storage.get('root-wal/main')).toBeNull();
    });

    test('neither password logs in (database away): uses fail retryably and the entry is kept until the database answers', async () => {
      const { db, storage, now } = await withRoot();
      await storage.put('root-wal/main', Buffer.from(JSON.stringify({ connection: 'main', username: 'root', password: 'new-Aa1-xxxxxxxxxxxx', started: 0 })));
      db.users.get('root')!.password = 'new-Aa1-xxxxxxxxxxxx';
      const restarted = await restart(db, storage, now);
      db.down = true;
      expect((await errorOf(restarted.read('creds/app'))).retryable).toBe(true);
      expect(await storage.get('root-wal/main')).not.toBeNull();
      db.down = false;
      expect((await restarted.read('creds/app'))?.data?.username).toMatch(/^v-app-/);
      expect((await storedConfig(storage)).connection_details.password).toBe('new-Aa1-xxxxxxxxxxxx');
      expect(await storage.get('root-wal/main')).toBeNull();
    });

    test("a lost reply to the database change: the new password logs in, so the rotation succeeded; a config write that sets the password drops an entry", async () => {
      const { tb, db, storage } = await withRoot();
      db.loseReply = true;
      await tb.write('rotate-root/main', {});
      const newPw = db.users.get('root')!.password;
      expect(newPw).not.toBe('root-secret');
      expect((await storedConfig(storage)).connection_details.password).toBe(newPw);
      expect(db.initialized.get(CONN_ID)?.password).toBe(newPw);
      expect(await storage.get('root-wal/main')).toBeNull();

      await storage.put('root-wal/main', Buffer.from(JSON.stringify({ connection: 'main', username: 'root', password: 'stale-Aa1-xxxxxxxxxx', started: 0 })));
      db.users.get('root')!.password = 'set-by-hand';
      await tb.write('config/main', { password: 'set-by-hand' });
      expect(await storage.get('root-wal/main')).toBeNull();
      expect(db.initialized.get(CONN_ID)?.password).toBe('set-by-hand');
    });
  });

  test('reset closes and re-initializes with the stored config', async () => {
    const { tb, db } = await setup();
    await tb.write('config/main', CONN);
    db.calls.length = 0;
    await tb.write('reset/main', {});
    expect(db.calls).toEqual(['initialize 00000000-0000-4000-8000-000000000000/main']);
    expect(db.initialized.has('00000000-0000-4000-8000-000000000000/main')).toBe(true);
  });
});

describe('database engine: dynamic roles', () => {
  const ROLE = { db_name: 'main', creation_statements: ["CREATE ROLE \"{{name}}\" LOGIN PASSWORD '{{password}}'"], revocation_statements: 'DROP ROLE "{{name}}"', default_ttl: '10m', max_ttl: '1h' };

  test('role CRUD, required fields, default_ttl over max_ttl refused', async () => {
    const { tb } = await setup();
    expect((await errorOf(tb.write('roles/app', { db_name: 'main' }))).message).toMatch(/creation_statements/);
    expect((await errorOf(tb.write('roles/app', { ...ROLE, default_ttl: '2h' }))).message).toMatch(/default_ttl/);
    await tb.write('roles/app', ROLE);
    expect((await tb.read('roles/app'))?.data).toEqual({
      db_name: 'main',
      default_ttl: 600,
      max_ttl: 3600,
      creation_statements: ROLE.creation_statements,
      revocation_statements: ['DROP ROLE "{{name}}"'],
      rollback_statements: [],
      renew_statements: [],
      credential_type: 'password',
      credential_config: {},
    });
    expect((await tb.list('roles'))?.data).toEqual({ keys: ['app'] });
    expect(await tb.writeOperation('roles/app')).toBe('update');
    await tb.write('roles/app', { renew_statements: ['R'] });
    expect((await tb.read('roles/app'))?.data).toMatchObject({ renew_statements: ['R'], default_ttl: 600 });
  });

  test('creds: a user with a default-policy password and an expiration; renew extends within max_ttl; revoke drops it', async () => {
    const { tb, db, now } = await setup();
    await tb.write('config/main', CONN);
    await tb.write('roles/app', ROLE);
    const issued = (await tb.read('creds/app'))!;
    const { username, password } = issued.data as { username: string; password: string };
    expect(satisfiesPolicy(defaultPasswordPolicy(), password)).toBe(true);
    expect(issued.secret).toMatchObject({ type: 'creds', ttl: 600, maxTtl: 3600, renewable: true });
    expect(JSON.stringify(issued.secret?.internalData)).not.toContain(password);
    expect(db.users.get(username)).toEqual({ password, expiration: now.t / 1000 + 600 });

    now.t += 100_000;
    const renewed = await tb.renew(issued, { increment: 1200 });
    expect(renewed?.secret?.ttl).toBe(1200);
    expect(db.users.get(username)?.expiration).toBe(now.t / 1000 + 1200);

    await tb.revoke(issued);
    expect(db.users.has(username)).toBe(false);
  });

  test('roles not allowed by the connection are refused; a password policy on the connection is used', async () => {
    const { tb } = await setup();
    await tb.write('config/main', { ...CONN, allowed_roles: ['other'], password_policy: 'strong' });
    await tb.write('roles/app', ROLE);
    expect((await errorOf(tb.read('creds/app'))).message).toMatch(/not allowed/);
    await tb.write('config/main', { allowed_roles: ['*'] });
    expect((await tb.read('creds/app'))?.data?.password).toBe('policy-strong-Aa1-xxxxxxxx');
  });

  test('a failed revocation is an error the core retries; a restarted plugin is re-initialized once', async () => {
    const { tb, db } = await setup();
    await tb.write('config/main', CONN);
    await tb.write('roles/app', ROLE);
    const issued = (await tb.read('creds/app'))!;
    db.down = true;
    const e = await errorOf(tb.revoke(issued));
    expect(e.retryable).toBe(true);
    db.down = false;
    db.initialized.clear(); // the plugin process restarted
    await tb.revoke(issued);
    expect(db.users.size).toBe(0);
  });

  test('rsa_private_key: the public key goes to the plugin, a PKCS#8 private key to the caller', async () => {
    const { tb, db } = await setup();
    await tb.write('config/main', CONN);
    await tb.write('roles/k', { ...ROLE, credential_type: 'rsa_private_key', credential_config: { key_bits: 2048 } });
    await tb.write('config/main', { allowed_roles: '*' });
    const r = (await tb.read('creds/k'))!;
    expect(String(r.data?.rsa_private_key)).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(db.users.get(String(r.data?.username))?.publicKey).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    expect((await errorOf(tb.write('roles/k2', { ...ROLE, credential_type: 'rsa_private_key', credential_config: { key_bits: 1024 } }))).message).toMatch(/key_bits/);
  });
});

describe('database engine: static roles', () => {
  const STATIC = { db_name: 'main', username: 'svc', rotation_period: '10s', rotation_statements: ["ALTER ROLE \"{{name}}\" PASSWORD '{{password}}'"] };

  test('rotated at creation, on rotate-role and when due; ttl counts down; delete leaves the user', async () => {
    const { tb, db, now } = await setup();
    db.users.set('svc', { password: 'initial', expiration: 0 });
    await tb.write('config/main', CONN);
    expect((await errorOf(tb.write('static-roles/st', { ...STATIC, rotation_period: 4 }))).message).toMatch(/rotation_period/);
    await tb.write('static-roles/st', STATIC);
    const first = (await tb.read('static-creds/st'))!.data as Record<string, unknown>;
    expect(first.password).toBe(db.users.get('svc')?.password);
    expect(first.password).not.toBe('initial');
    expect(first).toMatchObject({ username: 'svc', rotation_period: 10, ttl: 10, last_service_rotation: new Date(now.t).toISOString() });

    now.t += 4_000;
    expect((await tb.read('static-creds/st'))!.data?.ttl).toBe(6);
    await tb.backend.periodic();
    expect(db.users.get('svc')?.password).toBe(first.password); // not due yet

    now.t += 6_000;
    await tb.backend.periodic();
    const second = (await tb.read('static-creds/st'))!.data as Record<string, unknown>;
    expect(second.password).not.toBe(first.password);
    expect(second.password).toBe(db.users.get('svc')?.password);
    expect(second.ttl).toBe(10);

    now.t += 3_000;
    await tb.write('rotate-role/st', {});
    const third = (await tb.read('static-creds/st'))!.data as Record<string, unknown>;
    expect(third.password).not.toBe(second.password);
    expect(third.ttl).toBe(10);

    await tb.delete('static-roles/st');
    expect(db.users.get('svc')?.password).toBe(third.password);
    expect((await errorOf(tb.read('static-creds/st'))).status).toBe(404);
  });

  test('a failed first rotation refuses the role; username cannot change', async () => {
    const { tb, db } = await setup();
    await tb.write('config/main', CONN);
    expect((await errorOf(tb.write('static-roles/st', { ...STATIC, username: 'ghost' }))).message).toMatch(/no user ghost/);
    expect(await tb.read('static-roles/st')).toBeNull();
    db.users.set('svc', { password: 'initial', expiration: 0 });
    await tb.write('static-roles/st', STATIC);
    expect((await errorOf(tb.write('static-roles/st', { username: 'other' }))).message).toMatch(/username/);
  });

  test('after a restart: a role not yet due is not rotated, a due one is, and an unfinished rotation is replayed with its own password', async () => {
    const { tb, db, now, storage } = await setup();
    db.users.set('svc', { password: 'initial', expiration: 0 });
    db.users.set('svc2', { password: 'initial', expiration: 0 });
    await tb.write('config/main', CONN);
    await tb.write('static-roles/st', STATIC);
    await tb.write('static-roles/st2', { ...STATIC, username: 'svc2', rotation_period: '1h' });
    const p1 = db.users.get('svc')?.password;
    const p2 = db.users.get('svc2')?.password;

    // A crash between the database change and the role update of st2: the WAL holds the password the database now has.
    await storage.put('static-wal/st2', Buffer.from(JSON.stringify({ role: 'st2', username: 'svc2', password: 'from-the-wal-Aa1-', started: now.t })));
    db.users.get('svc2')!.password = 'from-the-wal-Aa1-';

    now.t += 11_000;
    const restarted = await createTestBackend(createDatabaseBackend({ clientFactory: fakeDbFactoryOf(db), now: () => now.t, rotationTimer: false }), { system, storage });
    await restarted.backend.periodic();
    expect(db.users.get('svc')?.password).not.toBe(p1); // was due: rotated
    expect((await restarted.read('static-creds/st'))?.data?.password).toBe(db.users.get('svc')?.password);
    expect(db.users.get('svc2')?.password).toBe('from-the-wal-Aa1-'); // replayed, not a new one
    expect((await restarted.read('static-creds/st2'))?.data?.password).toBe('from-the-wal-Aa1-');
    expect(p2).not.toBe('from-the-wal-Aa1-');
    expect(await storage.get('static-wal/st2')).toBeNull();
    const calls = db.calls.filter((c) => c.startsWith('updateUser')).length;
    await restarted.backend.periodic();
    expect(db.calls.filter((c) => c.startsWith('updateUser')).length).toBe(calls); // nothing doubled
  });

  test('a tick that finds the WAL of a creation still in progress does not rotate again once it gets the lock', async () => {
    const { tb, db } = await setup();
    db.users.set('svc', { password: 'initial', expiration: 0 });
    await tb.write('config/main', CONN);
    let release!: () => void;
    db.hold = new Promise<void>((r) => (release = r));
    const creating = tb.write('static-roles/st', STATIC); // WAL written, database change in flight
    while (!db.calls.some((c) => c.startsWith('updateUser'))) await new Promise((r) => setImmediate(r));
    const tick = tb.backend.periodic(); // the first tick replays WALs: it finds this one and waits for the lock
    await new Promise((r) => setImmediate(r));
    db.hold = null;
    release();
    await creating;
    await tick;
    const creds = (await tb.read('static-creds/st'))!.data as Record<string, unknown>;
    expect(db.calls.filter((c) => c.startsWith('updateUser')).length).toBe(1);
    expect(creds.password).toBe(db.users.get('svc')?.password);
  });
});

/** A client factory for a second engine instance over the same fake database (a restarted process, so no connection is initialized). */
function fakeDbFactoryOf(db: FakeDb): DatabaseClientFactory {
  db.initialized.clear();
  return fakeDb(db).factory;
}
