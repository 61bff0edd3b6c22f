import { StrongroomError } from '../errors.js';
import { assertSqlSafe, formatExpiration, renderStatement, splitStatements } from './statements.js';
import { parseSqlConfig, renderConnectionUrl } from './sql-config.js';

describe('SQL statement helpers', () => {
  test('splitStatements splits every command on ";" and drops empties', () => {
    expect(splitStatements(['CREATE ROLE "{{name}}"; GRANT x TO "{{name}}";', '  ', 'SELECT 1'])).toEqual([
      'CREATE ROLE "{{name}}"',
      'GRANT x TO "{{name}}"',
      'SELECT 1',
    ]);
  });

  test('renderStatement substitutes name/username, password and expiration, and leaves unknown values', () => {
    expect(renderStatement(`CREATE ROLE "{{name}}" PASSWORD '{{password}}' VALID UNTIL '{{expiration}}' -- {{username}} {{other}}`, { name: 'u', password: 'p', expiration: 'e' })).toBe(
      `CREATE ROLE "u" PASSWORD 'p' VALID UNTIL 'e' -- u {{other}}`,
    );
    expect(renderStatement('{{password}}', { name: 'u' })).toBe('{{password}}');
  });

  test('formatExpiration is Vault\'s "2006-01-02 15:04:05-0700" in UTC', () => {
    expect(formatExpiration(Date.UTC(2031, 0, 2, 3, 4, 5) / 1000)).toBe('2031-01-02 03:04:05+0000');
  });

  test.each([`a'b`, 'a"b', 'a\\b', 'a;b', 'a`b', 'a\nb'])('assertSqlSafe refuses %j with a 400 naming the field', (v) => {
    expect(() => assertSqlSafe('password', v)).toThrow(StrongroomError);
    expect(() => assertSqlSafe('password', v)).toThrow(/^password contains characters/);
  });

  test('assertSqlSafe lets generated names and passwords through', () => {
    expect(() => assertSqlSafe('username', 'v-token-role-AbC123-1700000000')).not.toThrow();
    expect(() => assertSqlSafe('password', 'Aa1-bB2-cC3-dD4-eE5x')).not.toThrow();
  });
});

describe('SQL connection config', () => {
  test('defaults as Vault: 4 open connections, idle = open, no lifetime; unknown keys kept', () => {
    const c = parseSqlConfig({ connection_url: 'postgresql://{{username}}:{{password}}@h/db', username: 'admin', password: 'pw', allowed_roles: ['*'] }, {});
    expect(c).toMatchObject({ max_open_connections: 4, max_idle_connections: 4, max_connection_lifetime: 0, disable_escaping: false, allowed_roles: ['*'] });
  });

  test('wire-lenient values and a 400 naming the bad field', () => {
    expect(parseSqlConfig({ connection_url: 'x', max_open_connections: '7', max_connection_lifetime: '1m', disable_escaping: 'true' }, {})).toMatchObject({
      max_open_connections: 7,
      max_connection_lifetime: 60,
      disable_escaping: true,
    });
    expect(() => parseSqlConfig({ connection_url: 'x', max_open_connections: 'many' }, {})).toThrow('field "max_open_connections": invalid integer');
    expect(() => parseSqlConfig({}, {})).toThrow('field "connection_url": missing required field');
    expect(() => parseSqlConfig({ connection_url: 'x', username_template: '{{ .Bad }}' }, {})).toThrow('invalid username_template: no field .Bad');
  });

  test('renderConnectionUrl escapes credentials unless disable_escaping', () => {
    const url = 'postgresql://{{username}}:{{password}}@h/db';
    expect(renderConnectionUrl(url, { username: 'a@b', password: 'p/w:x', disableEscaping: false })).toBe('postgresql://a%40b:p%2Fw%3Ax@h/db');
    expect(renderConnectionUrl(url, { username: 'a', password: 'p%2F', disableEscaping: true })).toBe('postgresql://a:p%2F@h/db');
  });
});
