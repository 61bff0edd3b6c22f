import { compileSpecialPaths } from './special-paths';

describe('special path matchers', () => {
  const m = compileSpecialPaths(['login', 'role/+/secret-id', 'tidy/*', 'pub+lic']);
  it.each([
    ['login', true],
    ['login/extra', false],
    ['role/web/secret-id', true],
    ['role/web/other', false],
    ['role/a/b/secret-id', false],
    ['tidy/secret-id', true],
    ['tidy', false],
    ['pub+lic', true],
  ])('%s -> %s', (path, expected) => expect(m(path)).toBe(expected));
  it('matches nothing without patterns', () => expect(compileSpecialPaths([])('login')).toBe(false));
});
