import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { createMemoryStorage } from '../storage.js';
import type { SystemView } from '../system-view.js';
import { StrongroomError } from '../errors.js';
import { createCallbackClient } from './callback-client.js';
import { createCallbackServer } from './callback-server.js';

const system: SystemView = {
  defaultLeaseTtl: async () => 1,
  maxLeaseTtl: async () => 2,
  generatePasswordFromPolicy: async (p) => `pw-${p}`,
  coreVersion: async () => 'v-test',
  sendEvent: async () => undefined,
  openDatabasePlugin: async (name, version) => {
    if (version === 'v9.9.9') throw new StrongroomError('bad_request', 'plugin_version: not registered');
    // The built-in runs in the engine's process: no socket, no secret.
    if (version === '') return { socketPath: '', secret: '', version: 'v0.1.0+builtin', builtin: true };
    return { socketPath: `/run/${name}.sock`, secret: 's3cret', version, builtin: false };
  },
};

describe('callback server: secret and mount scoping', () => {
  let dir: string;
  let socketPath: string;
  const storages = { a: createMemoryStorage(), b: createMemoryStorage() };
  const served = new Set(['a']);
  let server: ReturnType<typeof createCallbackServer>;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sr-cb-'));
    socketPath = path.join(dir, 'core.sock');
    server = createCallbackServer({
      socketPath,
      secret: () => Buffer.from('right-secret'),
      resolve: (uuid) => (served.has(uuid) ? { storage: storages[uuid as 'a' | 'b'], system } : null),
    });
    await server.start();
    await storages.b.put('k', Buffer.from('b-value'));
  });
  afterAll(async () => {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('the right secret reaches the served mount over the streams', async () => {
    const client = createCallbackClient({ socketPath, secret: 'right-secret' });
    const st = client.storage('a');
    await st.put('x/y', Buffer.from('v'));
    expect(Buffer.from((await st.get('x/y')) as Uint8Array).toString()).toBe('v');
    expect(await st.list('x/')).toEqual(['y']);
    await st.delete('x/y');
    expect(await st.get('x/y')).toBeNull();
    const sv = client.system('a');
    expect([await sv.defaultLeaseTtl(), await sv.maxLeaseTtl(), await sv.generatePasswordFromPolicy('p'), await sv.coreVersion()]).toEqual([
      1,
      2,
      'pw-p',
      'v-test',
    ]);
    expect(await sv.openDatabasePlugin?.('postgresql-database-plugin', '')).toEqual({ socketPath: '', secret: '', version: 'v0.1.0+builtin', builtin: true });
    expect(await sv.openDatabasePlugin?.('postgresql-database-plugin', 'v2.0.0')).toEqual({
      socketPath: '/run/postgresql-database-plugin.sock',
      secret: 's3cret',
      version: 'v2.0.0',
      builtin: false,
    });
    await expect(sv.openDatabasePlugin?.('postgresql-database-plugin', 'v9.9.9')).rejects.toMatchObject({ status: 400, message: 'plugin_version: not registered' });
    client.close();
  });

  test('a mount the process does not serve is refused with 403', async () => {
    const client = createCallbackClient({ socketPath, secret: 'right-secret' });
    const err = (await client.storage('b').get('k').catch((e: unknown) => e)) as StrongroomError;
    expect(err).toBeInstanceOf(StrongroomError);
    expect(err.status).toBe(403);
    expect(err.message).toBe('mount b is not served by this plugin process');
    client.close();
  });

  test('a wrong secret gets nothing', async () => {
    const client = createCallbackClient({ socketPath, secret: 'wrong-secret', callTimeoutMs: 2000 });
    const err = (await client.storage('a').get('x').catch((e: unknown) => e)) as StrongroomError;
    expect(err).toBeInstanceOf(StrongroomError);
    expect(err.code).toBe('unavailable');
    expect(err.message).toMatch(/plugin secret mismatch/);
    client.close();
  });
});

describe('serve(): magic cookie', () => {
  test('a plugin run by hand explains itself and exits 1', () => {
    const fixture = path.resolve(__dirname, '../../dist/transport/fixtures/echo-plugin.js');
    if (!fs.existsSync(fixture)) throw new Error(`echo fixture not built at ${fixture}: run "npx tsc -b sdk-plugin" first`);
    const env = { PATH: process.env.PATH ?? '' };
    const r = spawnSync(process.execPath, [fixture], { env, encoding: 'utf8', timeout: 10_000 });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/This binary is a Strongroom plugin\. It is not meant to be run directly/);
  });
});
