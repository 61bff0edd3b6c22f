import { compilePattern } from './pattern.js';

describe('compilePattern', () => {
  it('matches literals and one-segment params', () => {
    const p = compilePattern('keys/:name');
    expect(p.match('keys/foo')).toEqual({ name: 'foo' });
    expect(p.match('keys/foo/bar')).toBeNull();
    expect(p.match('keys/')).toBeNull();
    expect(p.match('keysfoo')).toBeNull();
    expect(p.params).toEqual(['name']);
  });

  it('refuses a param ending in a period (spec: unsupported path)', () => {
    const p = compilePattern('keys/:name');
    expect(p.match('keys/foo.')).toBeNull();
    expect(p.match('keys/.')).toBeNull();
    expect(p.match('keys/foo.bar')).toEqual({ name: 'foo.bar' });
  });

  it('handles optional groups, repeated and nested', () => {
    const hash = compilePattern('hash{/:algorithm}');
    expect(hash.match('hash')).toEqual({});
    expect(hash.match('hash/sha2-256')).toEqual({ algorithm: 'sha2-256' });
    const random = compilePattern('random{/:source}{/:bytes}');
    expect(random.match('random/all/64')).toEqual({ source: 'all', bytes: '64' });
    expect(random.match('random/64')).toEqual({ source: '64' });
    const nested = compilePattern('a{/:x{/:y}}');
    expect(nested.match('a/1/2')).toEqual({ x: '1', y: '2' });
    expect(nested.match('a/1')).toEqual({ x: '1' });
    expect(nested.expand()).toEqual(['a', 'a/{x}', 'a/{x}/{y}']);
    expect(random.expand()).toEqual(['random', 'random/{bytes}', 'random/{source}', 'random/{source}/{bytes}']);
  });

  it('captures the rest of the path, slashes included, possibly empty', () => {
    const p = compilePattern('data/*path');
    expect(p.match('data/a/b/c')).toEqual({ path: 'a/b/c' });
    expect(p.match('data/')).toEqual({ path: '' });
    expect(p.match('data/x.')).toEqual({ path: 'x.' });
    expect(p.rest).toBe('path');
    expect(p.expand()).toEqual(['data/{path}']);
  });

  it('escapes regex characters in literals', () => {
    const p = compilePattern('a.b+(c)');
    expect(p.match('a.b+(c)')).toEqual({});
    expect(p.match('aXb+(c)')).toBeNull();
  });

  it.each([['keys/:'], ['a{b'], ['a}b'], ['*rest/x'], ['{}'], [':a/:a']])('rejects malformed %p', (src) => {
    expect(() => compilePattern(src)).toThrow();
  });
});
