import { createRouter, newMountEntry, normalizeMountPath, checkReservedPath } from './mount-table';

describe('router', () => {
  const r = createRouter<string>();
  r.add(newMountEntry('mounts', 'secret/', { type: 'kv' }, 'root'), 'kv');
  r.add(newMountEntry('mounts', 'secret/team/', { type: 'kv' }, 'other'), 'other-ns');
  r.add(newMountEntry('mounts', 'transit/', { type: 'transit' }, 'root'), 'transit');
  r.add(newMountEntry('auth', 'approle/', { type: 'approle' }, 'root'), 'approle');

  it('routes by longest prefix inside the namespace', () => {
    expect(r.match('root', 'secret/data/foo')).toMatchObject({ handle: 'kv', mountPath: 'secret/', relativePath: 'data/foo' });
    expect(r.match('root', 'auth/approle/login')).toMatchObject({ handle: 'approle', relativePath: 'login' });
    expect(r.match('root', 'transit')).toMatchObject({ handle: 'transit', relativePath: '' });
    expect(r.match('root', 'nothing/here')).toBeUndefined();
    expect(r.match('other', 'secret/team/x')?.handle).toBe('other-ns');
  });

  it('detects overlapping mounts', () => {
    expect(r.conflict('root', 'secret/sub/')).toBe('secret/');
    expect(r.conflict('root', 'sec/')).toBeUndefined();
  });

  it('normalises and guards mount paths', () => {
    expect(normalizeMountPath('/a//b')).toBe('a/b/');
    expect(() => normalizeMountPath('a/../b')).toThrow(/invalid segment/);
    expect(() => checkReservedPath('mounts', 'sys/')).toThrow(/reserved/);
  });
});
