import * as root from './index.js';
import * as host from './host.js';
import * as database from './database/index.js';

describe('entry points', () => {
  it('the root entry is the engine author surface: small, and without the host side', () => {
    const names = Object.keys(root);
    expect(names.length).toBeLessThanOrEqual(30);
    for (const n of ['serve', 'defineBackend', 'definePath', 'defineSecret', 'f', 'badRequest', 'createRecordStore', 'createKeyedMutex', 'createDueScheduler', 'scrubSecrets', 'createTestBackend']) {
      expect(names).toContain(n);
    }
    for (const n of ['createCallbackServer', 'createBackendClient', 'transport', 'database', 'serveDatabasePlugin']) expect(names).not.toContain(n);
  });

  it('the host and database entries carry the core side and the database-plugin contract', () => {
    expect(typeof host.createCallbackServer).toBe('function');
    expect(typeof host.createBackendClient).toBe('function');
    expect(typeof host.defineBackend).toBe('function');
    expect(typeof database.serveDatabasePlugin).toBe('function');
    expect(typeof database.createDatabasePluginClient).toBe('function');
  });
});
