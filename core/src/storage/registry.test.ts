/**
 * The storage registry is the one place a backend is declared: the config
 * loader accepts exactly its names and validates a block with its schema, the
 * server opens it through its factory, and only a backend that says so runs HA.
 */
import { parseConfig } from '../config/config.js';
import { openStorage, STORAGE_BACKENDS, storageHaEnabled, storageSchema } from './registry.js';

const LISTENER = 'listener "tcp" { tls_disable = true }';
const logger = { warn: () => undefined, info: () => undefined };

describe('storage registry', () => {
  it('names level, file (Vault\'s name for a local store), inmem and postgresql, and the config loader accepts each by its schema', () => {
    expect([...STORAGE_BACKENDS].sort()).toEqual(['file', 'inmem', 'level', 'postgresql']);
    const minimal: Record<string, string> = { level: 'path = "/d"', file: 'path = "/d"', inmem: '', postgresql: 'connection_url = "postgres://x"' };
    for (const name of STORAGE_BACKENDS) {
      expect(storageSchema(name)).toBeDefined();
      expect(parseConfig(`storage "${name}" { ${minimal[name]} }\n${LISTENER}`).storage.type).toBe(name);
    }
    expect(storageSchema('consul')).toBeUndefined();
    expect(storageSchema('toString')).toBeUndefined();
    expect(() => parseConfig(`storage "consul" {}\n${LISTENER}`)).toThrow(/unsupported storage type "consul" \(expected level, file, inmem, postgresql\)/);
  });

  it('only a configuration that asks for it runs HA', () => {
    const pg = (extra: string) => parseConfig(`storage "postgresql" {\n connection_url = "postgres://x"\n ${extra}\n}\n${LISTENER}`).storage;
    expect(storageHaEnabled(pg('ha_enabled = "true"'))).toBe(true);
    expect(storageHaEnabled(pg(''))).toBe(false);
    expect(storageHaEnabled({ type: 'inmem', config: {} })).toBe(false);
  });

  it('opens a backend through its factory', async () => {
    const opened = await openStorage({ type: 'inmem', config: {} }, { logger });
    expect(opened.haLock).toBeUndefined();
    await opened.physical.put('a/b', Buffer.from('v'));
    expect(Buffer.from((await opened.physical.get('a/b'))!).toString()).toBe('v');
    await opened.physical.close();
  });
});
