import { z as zod } from 'zod';
import * as root from './index.js';
import * as testing from './testing.js';
import * as host from './host.js';
import * as database from './database/index.js';

const pkg = require('../package.json') as { exports: object; dependencies: object; peerDependencies: object };

describe('entry points', () => {
  it('the package exports the author, testing, database and host entries and no file by path', () => {
    expect(Object.keys(pkg.exports).sort()).toEqual(['.', './database', './host', './package.json', './testing']);
    // One zod in an author's bundle: the SDK takes the author's (a peer) and hands out the one it uses.
    expect(Object.keys(pkg.dependencies)).not.toContain('zod');
    expect(Object.keys(pkg.peerDependencies)).toEqual(['zod']);
    expect(root.z).toBe(zod);
  });

  it('the root entry is the whole engine author surface, without the host side or the harness', () => {
    const names = Object.keys(root);
    // What the engines of this repository use, and renewedAuth, which an auth method's authRenew answers.
    for (const n of [
      'serve', 'defineBackend', 'definePath', 'defineSecret', 'renewedAuth', 'f', 'z', 'badRequest', 'StrongroomError', 'FieldParseError',
      'createRecordStore', 'createKeyedMutex', 'createDueScheduler', 'createRotationScheduler', 'createStaticRoleRotation', 'scrubSecrets',
      'compileTemplate', 'validateTemplate', 'utf16le', 'generatePassword', 'passwordPolicy', 'defaultPasswordPolicy', 'formatGoDuration',
      'parseCommaList', 'parseInteger', 'parseDuration', 'getJSON', 'putJSON', 'isStdBase64', 'tokens', 'cidr', 'leaseTtl', 'hashToolPath',
    ]) {
      expect(names).toContain(n);
    }
    for (const n of ['createCallbackServer', 'createBackendClient', 'startPluginProcess', 'serveDatabasePlugin', 'describeBackend', 'createTestBackend', 'createMemoryStorage']) {
      expect(names).not.toContain(n);
    }
  });

  it('the testing entry holds the harness; the host and database entries the core side and the database-plugin contract', () => {
    expect(Object.keys(testing).sort()).toEqual(['createFaultyStore', 'createMemoryStorage', 'createTestBackend', 'errorOf', 'helpFor', 'toOpenApi']);
    expect(typeof host.createCallbackServer).toBe('function');
    expect(typeof host.createBackendClient).toBe('function');
    expect(typeof host.defineBackend).toBe('function');
    expect(typeof database.serveDatabasePlugin).toBe('function');
    expect(typeof database.createDatabasePluginClient).toBe('function');
  });
});
