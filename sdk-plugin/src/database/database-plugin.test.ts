import * as fs from 'node:fs';
import * as path from 'node:path';
import { StrongroomError } from '../errors.js';
import { closeDatabasePluginChannel, createDatabaseClient, createDatabasePluginClient, isConnectionNotInitialized, type DatabasePluginClientOptions } from './client.js';
import { memoryPlugin } from './fixtures/memory-db.js';
import { createInProcessDatabaseTransport } from './in-process.js';
import { startDatabasePluginProcess, type DatabasePluginProcess } from './test-process.js';
import type { DatabasePlugin, DatabasePluginClient, NewUserRequest } from './types.js';

// The fixture runs as a real process from the build, like the backend echo fixture.
const FIXTURE = path.resolve(__dirname, '../../dist/database/fixtures/memory-db-plugin.js');
// Serves the Database service's Type alone, as a plugin from before the stream would (and no user call).
const UNARY_ONLY_FIXTURE = path.resolve(__dirname, '../../dist/transport/fixtures/database-fixture-plugin.js');

const newUser = (roleName: string, over: Partial<NewUserRequest> = {}): NewUserRequest => ({
  usernameConfig: { displayName: 'token', roleName },
  password: 'pw-1',
  expiration: 1_700_000_000,
  statements: { commands: ['CREATE'] },
  rollbackStatements: { commands: [] },
  credentialType: 'password',
  ...over,
});

/** What the engine logs through, kept for the assertions. */
function memoryLogger() {
  const lines: string[] = [];
  return { lines, error: (msg: string, meta?: Record<string, unknown>) => void lines.push(`${msg} ${JSON.stringify(meta ?? {})}`) };
}

let proc: DatabasePluginProcess;
const inProcessLog = memoryLogger();
const inProcess = createInProcessDatabaseTransport(memoryPlugin, { label: 'memory-database-plugin v0.1.0+builtin', logger: inProcessLog });

beforeAll(async () => {
  if (!fs.existsSync(FIXTURE)) throw new Error(`fixture not built at ${FIXTURE}: run "npx tsc -b sdk-plugin" first`);
  proc = await startDatabasePluginProcess({ args: [FIXTURE] });
});
afterAll(async () => {
  await proc.stop();
  await inProcess.closeAll();
});

// The one contract, whichever way the frames travel: a plugin process's stream, or the plugin in this process.
describe.each([
  { via: 'a plugin process (its stream)', client: (id: string) => createDatabasePluginClient(proc.address, id), log: () => proc.stderr() },
  { via: 'the plugin in this process', client: (id: string) => createDatabaseClient(inProcess, id), log: () => inProcessLog.lines.join('\n') },
])('the Database contract through $via', ({ client, log }) => {
  test('Type, Initialize and the user calls reach the instance of the named connection', async () => {
    const c = client('conn-a');
    expect(await c.type()).toBe('memory');
    const init = await c.initialize({ config: { prefix: 'a' }, verifyConnection: true });
    expect(init.config).toMatchObject({ prefix: 'a' });
    const { username } = await c.newUser(newUser('web'));
    expect(username).toBe('a-web-1');
    await c.updateUser({ username, credentialType: 'password', password: { newPassword: 'pw-2', statements: { commands: [] } } });
    await c.updateUser({ username, credentialType: 'password', expiration: { newExpiration: 1_800_000_000, statements: { commands: [] } } });
    await c.deleteUser({ username, statements: { commands: [] } });
    const err = await c.deleteUser({ username, statements: { commands: [] } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StrongroomError);
    expect((err as StrongroomError).status).toBe(400);
    expect((err as StrongroomError).message).toBe('no user a-web-1 on connection a');
  });

  test('two connections are multiplexed, each with its own instance', async () => {
    const a = client('mux-a');
    const b = client('mux-b');
    await Promise.all([a.initialize({ config: { prefix: 'ma' }, verifyConnection: false }), b.initialize({ config: { prefix: 'mb' }, verifyConnection: false })]);
    const [ua, ub] = await Promise.all([a.newUser(newUser('r')), b.newUser(newUser('r'))]);
    expect([ua.username, ub.username]).toEqual(['ma-r-1', 'mb-r-1']);
    // b's instance does not know a's user.
    await expect(b.deleteUser({ username: ua.username, statements: { commands: [] } })).rejects.toThrow('no user ma-r-1 on connection mb');
    await a.close();
    const gone = await a.newUser(newUser('r')).catch((e: unknown) => e);
    expect(isConnectionNotInitialized(gone)).toBe(true);
    await expect(b.newUser(newUser('r'))).resolves.toEqual({ username: 'mb-r-2' });
  });

  test('an unknown connection id is connection_not_initialized, for every user call', async () => {
    const c = client('never-initialized');
    for (const call of [
      () => c.newUser(newUser('x')),
      () => c.updateUser({ username: 'u', credentialType: 'password' }),
      () => c.deleteUser({ username: 'u', statements: { commands: [] } }),
    ]) {
      const err = (await call().catch((e: unknown) => e)) as StrongroomError;
      expect(err).toBeInstanceOf(StrongroomError);
      expect(err.code).toBe('connection_not_initialized');
      expect(err.message).toBe('connection never-initialized is not initialized in this plugin process');
    }
    // Close of an unknown connection is not an error.
    await c.close();
  });

  test('Initialize replaces (and closes) the instance of that connection', async () => {
    const c = client('replace');
    const first = await c.initialize({ config: { prefix: 'r1' }, verifyConnection: false });
    await c.newUser(newUser('x'));
    await c.initialize({ config: { prefix: 'r2' }, verifyConnection: false });
    // The count is read at Initialize, so a probe on another connection shows the close.
    const probe = await client('probe').initialize({ config: {}, verifyConnection: false });
    expect(Number(probe.config.closed)).toBe(Number(first.config.closed) + 1);
    expect((await c.newUser(newUser('x'))).username).toBe('r2-x-1');
  });

  test('errors cross typed; untyped errors cross as "internal error" without their text', async () => {
    const c = client('errors');
    const typed = (await c.initialize({ config: { fail: 'typed' }, verifyConnection: false }).catch((e: unknown) => e)) as StrongroomError;
    expect(typed).toBeInstanceOf(StrongroomError);
    expect([typed.code, typed.status, typed.message, typed.details]).toEqual(['bad_request', 400, 'invalid field "prefix"', ['prefix: fail requested']]);
    const untyped = (await c.initialize({ config: { fail: 'untyped' }, verifyConnection: false }).catch((e: unknown) => e)) as StrongroomError;
    expect(untyped).toBeInstanceOf(StrongroomError);
    expect([untyped.code, untyped.status, untyped.message]).toEqual(['internal', 500, 'internal error']);
    // A process's log line may trail its reply: its stderr is read on its own.
    for (let i = 0; i < 100 && !log().includes('unexpected error in database plugin'); i++) await new Promise((r) => setTimeout(r, 20));
    expect(log()).toContain('unexpected error in database plugin');
    expect(log()).not.toContain('hunter2');
    // A failed Initialize stores nothing.
    expect(isConnectionNotInitialized(await c.newUser(newUser('x')).catch((e: unknown) => e))).toBe(true);
    await c.initialize({ config: { prefix: 'ok' }, verifyConnection: false });
    const unsupported = (await c.newUser(newUser('x', { credentialType: 'rsa_private_key', publicKey: 'PEM' })).catch((e: unknown) => e)) as StrongroomError;
    expect([unsupported.status, unsupported.message]).toEqual([400, 'credential_type rsa_private_key is not supported by the memory plugin']);
  });
});

describe('a plugin in the caller\'s process', () => {
  /** A client on `plugin` run in this process, as the database engine runs its built-ins. */
  const clientOn = (plugin: DatabasePlugin, opts: DatabasePluginClientOptions = {}): DatabasePluginClient =>
    createDatabaseClient(createInProcessDatabaseTransport(plugin, { label: 'broken-database-plugin v0.1.0+builtin', logger: memoryLogger() }), 'c', opts);

  test('a driver that throws, even synchronously and outside a promise, is an error reply: nothing reaches the caller\'s event loop', async () => {
    const uncaught = jest.fn();
    process.on('uncaughtException', uncaught);
    try {
      const throwing: DatabasePlugin = {
        type: 'broken',
        newInstance: () => {
          throw new TypeError('driver bug near password=hunter2');
        },
      };
      const err = (await clientOn(throwing).initialize({ config: {}, verifyConnection: true }).catch((e: unknown) => e)) as StrongroomError;
      expect(err).toBeInstanceOf(StrongroomError);
      expect([err.code, err.status, err.message]).toEqual(['internal', 500, 'internal error']);
      expect(uncaught).not.toHaveBeenCalled();
    } finally {
      process.off('uncaughtException', uncaught);
    }
  });

  test('a call that hangs in the plugin ends at its deadline with a 504 naming the plugin', async () => {
    const hanging: DatabasePlugin = {
      type: 'hang',
      newInstance: () => ({ ...memoryPlugin.newInstance(), initialize: () => new Promise(() => undefined) }),
    };
    const err = (await clientOn(hanging, { timeoutMs: 50 }).initialize({ config: {}, verifyConnection: false }).catch((e: unknown) => e)) as StrongroomError;
    expect([err.status, err.message]).toEqual([504, 'broken-database-plugin v0.1.0+builtin did not answer initialize within 50 ms']);
  });
});

describe('a plugin process', () => {
  test('a wrong secret is refused', async () => {
    const c = createDatabasePluginClient({ ...proc.address, socketPath: proc.address.socketPath, secret: 'wrong' }, 'conn-a', { timeoutMs: 3000 });
    const err = (await c.type().catch((e: unknown) => e)) as StrongroomError;
    expect(err).toBeInstanceOf(StrongroomError);
    expect(err.code).toBe('plugin_failed');
    expect(err.message).toMatch(/core secret mismatch/);
    // The stream the user calls travel on is refused too: no call reaches an instance.
    const streamed = (await c.newUser(newUser('web')).catch((e: unknown) => e)) as StrongroomError;
    expect(streamed).toBeInstanceOf(StrongroomError);
    expect(streamed.code).toBe('unavailable');
    expect(streamed.message).toMatch(/core secret mismatch/);
    // The right secret still works afterwards (the channel is replaced, not poisoned).
    expect(await createDatabasePluginClient(proc.address, 'conn-a').type()).toBe('memory');
    await expect(createDatabasePluginClient(proc.address, 'conn-a').newUser(newUser('web'))).resolves.toMatchObject({ username: expect.any(String) });
  });

  test('calls in flight on a stream fail as unavailable when the channel closes; the next call opens a new stream', async () => {
    const c = createDatabasePluginClient(proc.address, 'reopen');
    await c.initialize({ config: { prefix: 'ro' }, verifyConnection: false });
    const pending = c.newUser(newUser('x'));
    closeDatabasePluginChannel(proc.address.socketPath);
    const err = (await pending.catch((e: unknown) => e)) as StrongroomError;
    expect([err.code, err.message]).toEqual(['unavailable', 'the database plugin channel was closed']);
    expect((await c.newUser(newUser('x'))).username).toMatch(/^ro-x-/);
  });

  test('a plugin that does not serve the Database stream (an older SDK) is named as such', async () => {
    const old = await startDatabasePluginProcess({ args: [UNARY_ONLY_FIXTURE] });
    try {
      const c = createDatabasePluginClient(old.address, 'old', { label: 'old-plugin v1' });
      const err = (await c.initialize({ config: {}, verifyConnection: false }).catch((e: unknown) => e)) as StrongroomError;
      expect([err.code, err.message]).toEqual(['plugin_failed', 'old-plugin v1 does not serve the Database stream; rebuild it against this SDK']);
    } finally {
      old.child.kill('SIGTERM'); // this fixture exits on SIGTERM, not when its stdin closes
      await old.stop();
    }
  });

  test('the process exits when the core closes its stdin', async () => {
    const p = await startDatabasePluginProcess({ args: [FIXTURE] });
    const exit = new Promise<number | null>((r) => p.child.once('exit', (code) => r(code)));
    p.child.stdin?.end();
    expect(await exit).toBe(0);
    expect(fs.existsSync(p.address.socketPath)).toBe(false);
    await p.stop();
  });
});
