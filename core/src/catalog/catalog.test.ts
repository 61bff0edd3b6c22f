import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { createMemoryStorage, StrongroomError } from '@strongroom/sdk-plugin/host';
import { canonicalVersion, compareVersions, createPluginCatalog } from './catalog.js';

describe('plugin catalog', () => {
  let tmp: string;
  let dir: string;
  let store: ReturnType<typeof createMemoryStorage>;
  const write = (name: string, body: string) => {
    fs.writeFileSync(path.join(dir, name), body, { mode: 0o755 });
    return createHash('sha256').update(body).digest('hex');
  };
  const make = (pluginDirectory: string | null = dir) =>
    createPluginCatalog({
      store,
      pluginDirectory,
      builtins: [{ type: 'secret', name: 'kv', version: '0.1.0+builtin', main: '/opt/strongroom/plugins/kv/dist/main.js' }],
    });

  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sr-cat-'));
    dir = path.join(tmp, 'plugins');
    fs.mkdirSync(dir);
    store = createMemoryStorage();
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  test('built-ins are entries run by the server node binary, never persisted', async () => {
    const cat = make();
    expect(await cat.get('secret', 'kv')).toEqual({
      type: 'secret',
      name: 'kv',
      version: 'v0.1.0+builtin',
      command: process.execPath,
      args: ['/opt/strongroom/plugins/kv/dist/main.js'],
      env: [],
      sha256: '',
      builtin: true,
    });
    expect(await cat.get('secret', 'kv', 'v0.1.0+builtin')).toMatchObject({ builtin: true });
    expect(await cat.get('auth', 'kv')).toBeNull();
    expect(store.dump().size).toBe(0);
  });

  test('register persists under core/plugin-catalog/<type>/<name>/<version> with a canonical version', async () => {
    const sha = write('kv-ext.js', '#!/bin/sh\n');
    const cat = make();
    const e = await cat.register({ type: 'secret', name: 'kv', version: '1.2.3', command: 'kv-ext.js', sha256: sha.toUpperCase(), env: ['A=b=c'] });
    expect(e).toEqual({ type: 'secret', name: 'kv', version: 'v1.2.3', command: 'kv-ext.js', args: [], env: ['A=b=c'], sha256: sha, builtin: false });
    expect([...store.dump().keys()]).toEqual(['core/plugin-catalog/secret/kv/v1.2.3']);
    // A fresh catalog over the same store sees it.
    expect(await make().get('secret', 'kv', 'v1.2.3')).toEqual(e);
    expect(await cat.prepareStart(e)).toEqual({ main: fs.realpathSync(path.join(dir, 'kv-ext.js')), args: [], env: { A: 'b=c' } });
  });

  test("a built-in starts from its bundled file's real path (the sandbox grants that path); a missing bundle is named", async () => {
    const bundle = path.join(tmp, 'kv-plugin.js');
    fs.writeFileSync(bundle, '');
    const link = path.join(tmp, 'link.js');
    fs.symlinkSync(bundle, link);
    const cat = createPluginCatalog({ store, pluginDirectory: null, builtins: [{ type: 'secret', name: 'kv', version: '0.1.0+builtin', main: link }] });
    expect(await cat.prepareStart((await cat.get('secret', 'kv'))!)).toEqual({ main: fs.realpathSync(bundle), args: [], env: {} });
    await expect(make().prepareStart((await make().get('secret', 'kv'))!)).rejects.toThrow(
      'built-in plugin kv: its bundled file /opt/strongroom/plugins/kv/dist/main.js is missing (npm run build makes it)',
    );
  });

  test('an external plugin is a JavaScript entry file: anything else is refused (400 naming command), it could not be sandboxed', async () => {
    const sha = write('plugin.sh', '#!/bin/sh\n');
    await expect(make().register({ type: 'secret', name: 'sh', version: '1.0.0', command: 'plugin.sh', sha256: sha })).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/^command: .*JavaScript entry file/) });
  });

  test('version rules: built-in first without a version, else the highest semver', async () => {
    const sha = write('x.js', 'x');
    const cat = make();
    for (const v of ['1.0.0', '1.10.0', '1.9.0', '1.10.0-rc.1']) {
      await cat.register({ type: 'secret', name: 'other', version: v, command: 'x.js', sha256: sha });
      await cat.register({ type: 'secret', name: 'kv', version: v, command: 'x.js', sha256: sha });
    }
    expect((await cat.get('secret', 'other'))?.version).toBe('v1.10.0');
    expect((await cat.get('secret', 'kv'))?.version).toBe('v0.1.0+builtin');
    expect((await cat.get('secret', 'kv', '1.9.0'))?.version).toBe('v1.9.0');
    expect(await cat.get('secret', 'kv', '2.0.0')).toBeNull();
    expect((await cat.list('secret')).map((e) => `${e.name}@${e.version}`)).toEqual([
      'kv@v0.1.0+builtin',
      'kv@v1.0.0',
      'kv@v1.9.0',
      'kv@v1.10.0-rc.1',
      'kv@v1.10.0',
      'other@v1.0.0',
      'other@v1.9.0',
      'other@v1.10.0-rc.1',
      'other@v1.10.0',
    ]);
    await cat.remove('secret', 'other', 'v1.10.0');
    expect((await cat.get('secret', 'other'))?.version).toBe('v1.10.0-rc.1');
    await expect(cat.remove('secret', 'kv', 'v0.1.0+builtin')).rejects.toThrow(/cannot remove built-in/);
    await expect(cat.remove('secret', 'other', 'v9.9.9')).rejects.toMatchObject({ status: 404 });
  });

  test('bad input is a 400 naming the field', async () => {
    const sha = write('ok.js', 'ok');
    const cat = make();
    const bad = async (input: Record<string, unknown>, field: string) => {
      const err = await cat.register({ type: 'secret', name: 'p', version: '1.0.0', command: 'ok.js', sha256: sha, ...input } as never).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StrongroomError);
      expect((err as StrongroomError).status).toBe(400);
      expect((err as StrongroomError).message).toMatch(new RegExp(`^${field}`));
    };
    await bad({ type: 'nope' }, 'type');
    await bad({ name: '../x' }, 'name');
    await bad({ version: 'latest' }, 'version');
    await bad({ version: '1.0.0+builtin' }, 'version');
    await bad({ sha256: 'abc' }, 'sha256');
    await bad({ env: ['novalue'] }, 'env');
    await bad({ command: '../escape' }, 'command');
    await bad({ command: '/bin/sh' }, 'command');
    await bad({ command: 'missing' }, 'command');
  });

  test('commands escaping plugin_directory through a symlink are refused; no directory means no external plugins', async () => {
    fs.writeFileSync(path.join(tmp, 'outside'), 'evil');
    fs.symlinkSync(path.join(tmp, 'outside'), path.join(dir, 'link'));
    const sha = createHash('sha256').update('evil').digest('hex');
    await expect(make().register({ type: 'secret', name: 'p', version: '1.0.0', command: 'link', sha256: sha })).rejects.toThrow(
      'command: must stay inside plugin_directory',
    );
    write('ok.js', 'ok');
    await expect(make(null).register({ type: 'secret', name: 'p', version: '1.0.0', command: 'ok.js', sha256: sha })).rejects.toThrow(
      /no plugin_directory is configured/,
    );
  });

  test('sha256 is checked at registration and before every start', async () => {
    const sha = write('p.js', 'v1');
    const cat = make();
    // At registration a wrong sha256 is the caller's bad input: a 400 naming the field.
    await expect(cat.register({ type: 'secret', name: 'p', version: '1.0.0', command: 'p.js', sha256: 'a'.repeat(64) })).rejects.toMatchObject({
      status: 400,
      message: 'sha256: does not match the command file for p v1.0.0',
    });
    const e = await cat.register({ type: 'secret', name: 'p', version: '1.0.0', command: 'p.js', sha256: sha });
    await expect(cat.prepareStart(e)).resolves.toMatchObject({ args: [] });
    write('p.js', 'v2');
    await expect(cat.prepareStart(e)).rejects.toThrow('plugin sha256 mismatch for p v1.0.0');
  });

  test('semver helpers', () => {
    expect(canonicalVersion('1.2.3')).toBe('v1.2.3');
    expect(canonicalVersion('v1.2.3-beta.1+build.5')).toBe('v1.2.3-beta.1+build.5');
    expect(() => canonicalVersion('1.2')).toThrow(/version/);
    expect(compareVersions('v1.2.3', 'v1.2.10')).toBe(-1);
    expect(compareVersions('v1.0.0-alpha', 'v1.0.0')).toBe(-1);
    expect(compareVersions('v1.0.0-alpha.2', 'v1.0.0-alpha.10')).toBe(-1);
    expect(compareVersions('v1.0.0+a', 'v1.0.0+b')).toBe(0);
  });
});
