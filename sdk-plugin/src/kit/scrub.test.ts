import { redactCredentials, scrubSecrets } from './scrub.js';

describe('credential scrubbing', () => {
  test('scrubSecrets removes every secret, raw and URL-encoded', () => {
    expect(scrubSecrets('pw=s3cr@t url=postgres://u:s3cr%40t@h/', ['s3cr@t', undefined, ''])).toBe('pw=[redacted] url=postgres://u:[redacted]@h/');
  });

  test('scrubSecrets removes a secret whole even when a shorter secret is part of it', () => {
    expect(scrubSecrets('got abcdef', ['abc', 'abcdef'])).toBe('got [redacted]');
  });

  test('redactCredentials drops credential keys and masks a URL password, keeping a {{password}} template', () => {
    const details = {
      connection_url: 'postgresql://admin:hunter2@127.0.0.1:5432/db',
      username: 'admin',
      password: 'hunter2',
      private_key: 'PEM',
      client_secret: 'x',
      bind_token: 'y',
      ldap_dsn: 'ldap://cn=admin:pw@host',
      max_open_connections: 4,
    };
    const out = redactCredentials(details);
    expect(out).toEqual({ connection_url: 'postgresql://admin:*****@127.0.0.1:5432/db', username: 'admin', ldap_dsn: 'ldap://cn=admin:*****@host', max_open_connections: 4 });
    expect(JSON.stringify(out)).not.toContain('hunter2');
    expect(redactCredentials({ connection_url: 'postgresql://{{username}}:{{password}}@h/db' })).toEqual({ connection_url: 'postgresql://{{username}}:{{password}}@h/db' });
  });
});
