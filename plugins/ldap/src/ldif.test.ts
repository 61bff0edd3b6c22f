import { StrongroomError } from '@strongroom/sdk-plugin';
import { passwordChanges, scrub } from './directory.js';
import { SAMPLE_LDIF_FIELDS, compileLdif, decodeMaybeBase64, parseLdif } from './ldif.js';

const caught = (fn: () => unknown): StrongroomError => {
  try {
    fn();
  } catch (err) {
    return err as StrongroomError;
  }
  throw new Error('did not throw');
};

describe('parseLdif', () => {
  test('several records: add (the default), modify blocks, delete, modrdn; folded lines, comments, base64 values', () => {
    const text = [
      'version: 1',
      '# a user',
      'dn: cn=u1,ou=dynamic,dc=x',
      'objectClass: inetOrgPerson',
      'objectClass: top',
      'cn: u1',
      'description: a long',
      '  folded line',
      'userPassword:: ' + Buffer.from('s3cr:et').toString('base64'),
      '',
      'dn: cn=g,dc=x',
      'changetype: modify',
      'add: member',
      'member: cn=u1,ou=dynamic,dc=x',
      '-',
      'replace: description',
      'description: new',
      '-',
      'delete: seeAlso',
      '-',
      '',
      'dn: cn=old,dc=x',
      'changetype: delete',
      '',
      'dn: cn=a,dc=x',
      'changetype: modrdn',
      'newrdn: cn=b',
      'deleteoldrdn: 0',
      '',
    ].join('\n');
    expect(parseLdif(text, 'creation_ldif')).toEqual([
      {
        dn: 'cn=u1,ou=dynamic,dc=x',
        changetype: 'add',
        attributes: [
          { type: 'objectClass', values: ['inetOrgPerson', 'top'] },
          { type: 'cn', values: ['u1'] },
          { type: 'description', values: ['a long folded line'] },
          { type: 'userPassword', values: [Buffer.from('s3cr:et')] },
        ],
      },
      {
        dn: 'cn=g,dc=x',
        changetype: 'modify',
        changes: [
          { operation: 'add', type: 'member', values: ['cn=u1,ou=dynamic,dc=x'] },
          { operation: 'replace', type: 'description', values: ['new'] },
          { operation: 'delete', type: 'seeAlso', values: [] },
        ],
      },
      { dn: 'cn=old,dc=x', changetype: 'delete' },
      { dn: 'cn=a,dc=x', changetype: 'modrdn', newrdn: 'cn=b', deleteoldrdn: false, newsuperior: '' },
    ]);
  });

  test.each([
    ['objectClass: top\n', 'each record must start with dn:'],
    ['dn: cn=x\nchangetype: frobnicate\n', 'unknown changetype frobnicate'],
    ['dn: cn=x\nchangetype: delete\ncn: x\n', 'delete record with attributes'],
    ['dn: cn=x\nchangetype: modify\ncn: x\n', 'modify record expects add:, replace: or delete:'],
    ['dn: cn=x\n', 'add record without attributes'],
    ['dn: cn=x\njunk line\n', 'bad line'],
    ['dn: cn=x\njpegPhoto:< file:///etc/passwd\n', 'URL values'],
  ])('%j is a 400 naming the field', (text, msg) => {
    const err = caught(() => parseLdif(text, 'deletion_ldif'));
    expect(err).toBeInstanceOf(StrongroomError);
    expect(err.status).toBe(400);
    expect(err.message).toContain('invalid deletion_ldif: ');
    expect(err.message).toContain(msg);
  });
});

describe('LDIF templates', () => {
  test('the fields of the spec and utf16le render into LDIF for Active Directory', () => {
    const t = compileLdif(
      'dn: CN={{.Username}},OU=x\nunicodePwd::{{ printf "%q" .Password | utf16le | base64 }}\ndescription: {{.RoleName}} {{.DisplayName}} {{.IssueTime}} {{.ExpirationTime}} {{.IssueTimeSeconds}} {{.ExpirationTimeSeconds}}\n',
      'creation_ldif',
    );
    const [rec] = parseLdif(t.render({ ...SAMPLE_LDIF_FIELDS }), 'creation_ldif');
    expect(rec).toMatchObject({ dn: 'CN=v_sample_user,OU=x', changetype: 'add' });
    const attrs = (rec as { attributes: Array<{ type: string; values: Array<string | Buffer> }> }).attributes;
    expect((attrs[0]!.values[0] as Buffer).toString('utf16le')).toBe('"sample-Password-1"');
    expect(attrs[1]!.values[0]).toBe('role token 2026-01-01T00:00:00Z 2026-01-01T01:00:00Z 1767225600 1767229200');
  });
});

describe('decodeMaybeBase64', () => {
  test('base64 LDIF is decoded; plain LDIF and other text are left alone', () => {
    const ldif = 'dn: cn=x\nchangetype: delete\n';
    expect(decodeMaybeBase64(Buffer.from(ldif).toString('base64'))).toBe(ldif);
    expect(decodeMaybeBase64(ldif)).toBe(ldif);
    expect(decodeMaybeBase64('abcd')).toBe('abcd');
  });
});

describe('password changes per schema', () => {
  const flat = (schema: 'openldap' | 'ad' | 'racf', pw: string) =>
    passwordChanges(schema, pw).map((c) => [c.operation, c.modification.type, c.modification.values.map((v) => (Buffer.isBuffer(v) ? v.toString('utf16le') : v))]);
  test('openldap: userPassword; ad: the quoted password in UTF-16LE as unicodePwd; racf: password or pass phrase, noexpired', () => {
    expect(flat('openldap', 'pw')).toEqual([['replace', 'userPassword', ['pw']]]);
    expect(flat('ad', 'pw')).toEqual([['replace', 'unicodePwd', ['"pw"']]]);
    expect(flat('racf', 'short')).toEqual([
      ['replace', 'racfPassword', ['short']],
      ['replace', 'racfAttributes', ['noexpired']],
    ]);
    expect(flat('racf', 'a longer pass phrase')[0]).toEqual(['replace', 'racfPassPhrase', ['a longer pass phrase']]);
  });

  test('scrub takes every password out of an upstream message', () => {
    expect(scrub('bad value s3cret near s3cret', ['s3cret', ''])).toBe('bad value [redacted] near [redacted]');
  });
});
