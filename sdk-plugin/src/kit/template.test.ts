import { StrongroomError } from '../errors.js';
import { compileTemplate, renderTemplate, utf16le, validateTemplate } from './template.js';

const opts = { field: 'username_template' };
const renderUsernameTemplate = (t: string, d: Record<string, unknown>) => renderTemplate(t, d, opts);
const validateUsernameTemplate = (t: string) => validateTemplate(t, { DisplayName: 'display', RoleName: 'role' }, opts);

const data = { DisplayName: 'token-approle-long', RoleName: 'readonly-role' };

describe('templates (username)', () => {
  test("Vault's postgresql default: v-<display 8>-<role 8>-<random 20>-<unix_time>, at most 63", () => {
    const t = '{{ printf "v-%s-%s-%s-%s" (.DisplayName | truncate 8) (.RoleName | truncate 8) (random 20) (unix_time) | truncate 63 }}';
    const before = Math.floor(Date.now() / 1000);
    const out = renderUsernameTemplate(t, data);
    const m = /^v-token-ap-readonly-([A-Za-z0-9]{20})-(\d+)$/.exec(out);
    expect(m).not.toBeNull();
    expect(Number(m?.[2])).toBeGreaterThanOrEqual(before);
    expect(renderUsernameTemplate(t, data)).not.toBe(out);
  });

  test('the task-style spelling without printf, and truncation of the whole result', () => {
    const out = renderUsernameTemplate('v-{{.DisplayName | truncate 10}}-{{.RoleName | truncate 10}}-{{random 20}}-{{unix_time}}', data);
    expect(out).toMatch(/^v-token-appr-readonly-r-[A-Za-z0-9]{20}-\d{10}$/);
    expect(renderUsernameTemplate('{{ printf "%s-%s" .DisplayName .RoleName | truncate 12 }}', data)).toBe('token-approl');
  });

  test('functions', () => {
    expect(renderUsernameTemplate('{{ .RoleName | uppercase }}', data)).toBe('READONLY-ROLE');
    expect(renderUsernameTemplate('{{ "AbC" | lowercase }}', data)).toBe('abc');
    expect(renderUsernameTemplate('{{ .RoleName | replace "-" "_" }}', data)).toBe('readonly_role');
    expect(renderUsernameTemplate('{{ "abc" | sha256 }}', data)).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(renderUsernameTemplate('{{ "hi" | base64 }}', data)).toBe('aGk=');
    expect(renderUsernameTemplate('{{ .DisplayName | truncate_sha256 12 }}', data)).toMatch(/^toke[0-9a-f]{8}$/);
    expect(renderUsernameTemplate('{{ .RoleName | truncate_sha256 20 }}', data)).toBe('readonly-role');
    expect(renderUsernameTemplate('{{ uuid }}', data)).toMatch(/^[0-9a-f-]{36}$/);
    expect(renderUsernameTemplate('{{ timestamp "2006" }}', data)).toBe(String(new Date().getUTCFullYear()));
    expect(renderUsernameTemplate('{{ unix_time_millis }}', data)).toMatch(/^\d{13}$/);
    expect(renderUsernameTemplate('a {{- " b " -}} c', data)).toBe('a b c');
    expect(renderUsernameTemplate('plain', data)).toBe('plain');
  });

  test.each([
    ['{{ .Nope }}', 'no field .Nope'],
    ['{{ nope 1 }}', 'function "nope" not defined'],
    ['{{ .RoleName | truncate }}', 'truncate takes 2 arguments, got 1'],
    ['{{ .RoleName ', 'unclosed action'],
    ['{{ (random 3 }}', 'missing ")"'],
    ['{{ "abc }}', 'unterminated string'],
    ['{{ }}', 'empty pipeline'],
  ])('%s is a 400 naming username_template', (t, msg) => {
    let err: unknown;
    try {
      validateUsernameTemplate(t);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StrongroomError);
    expect((err as StrongroomError).status).toBe(400);
    expect((err as StrongroomError).message).toBe(`invalid username_template: ${msg}`);
  });
});

describe('templates (LDIF and the rest of the language)', () => {
  const ldifOpts = { field: 'creation_ldif', extraFunctions: { utf16le } };
  const ldifData = { Username: 'v_tok_role_x', Password: 'Pa55"w', RoleName: 'role', DisplayName: 'tok', IssueTimeSeconds: 1700000000 };

  test("Active Directory's unicodePwd: the quoted password as UTF-16LE bytes, base64", () => {
    const out = renderTemplate('unicodePwd::{{ printf "%q" .Password | utf16le | base64 }}', ldifData, ldifOpts);
    const b64 = out.slice('unicodePwd::'.length);
    expect(Buffer.from(b64, 'base64').toString('utf16le')).toBe(JSON.stringify('Pa55"w'));
  });

  test('utf16le exists only where a caller adds it (LDIF), not in username templates', () => {
    expect(() => renderTemplate('{{ .Password | utf16le }}', ldifData, opts)).toThrow('invalid username_template: function "utf16le" not defined');
  });

  test('fields with spaces and without, numbers, nested fields and the dot', () => {
    expect(renderTemplate('{{.Username}}|{{   .Username   }}|{{ .IssueTimeSeconds }}', ldifData, ldifOpts)).toBe('v_tok_role_x|v_tok_role_x|1700000000');
    expect(renderTemplate('{{ .A.B }}', { A: { B: 'deep' } }, opts)).toBe('deep');
    expect(renderTemplate('{{ printf "%d-%s" .N .S }}', { N: 42, S: 's' }, opts)).toBe('42-s');
  });

  test('comments, if / else if / else / end with eq, ne, not, and, or, len', () => {
    const t = compileTemplate('{{/* which */}}{{ if eq .RoleName "a" }}A{{ else if and (ne .RoleName "b") (not .Off) }}C{{ else }}B{{ end }}{{ if or .Off (len .RoleName) }}!{{ end }}', opts);
    expect(t.render({ RoleName: 'a', Off: false })).toBe('A!');
    expect(t.render({ RoleName: 'b', Off: false })).toBe('B!');
    expect(t.render({ RoleName: 'c', Off: false })).toBe('C!');
    expect(t.render({ RoleName: '', Off: false })).toBe('C');
  });

  test('compileTemplate keeps what it compiled, per field and set of extra functions, within its bound; a bad template is never kept', () => {
    const src = '{{ .RoleName | uppercase }}-{{ random 4 }}';
    const first = compileTemplate(src, opts);
    expect(compileTemplate(src, opts)).toBe(first);
    expect(compileTemplate(src, { field: 'creation_ldif' })).not.toBe(first);
    const fns = { utf16le };
    expect(compileTemplate(src, { ...opts, extraFunctions: fns })).not.toBe(first);
    expect(compileTemplate(src, { ...opts, extraFunctions: fns })).toBe(compileTemplate(src, { ...opts, extraFunctions: fns }));
    for (let i = 0; i < 256; i++) compileTemplate(`filler-${i}`, opts);
    const again = compileTemplate(src, opts);
    expect(again).not.toBe(first); // pushed out by 256 newer ones, compiled afresh
    expect(again.render({ RoleName: 'r' })).toMatch(/^R-[A-Za-z0-9]{4}$/);
    for (let i = 0; i < 2; i++) expect(() => compileTemplate('{{ if .A }}x', opts)).toThrow('invalid username_template: missing {{end}}');
  });

  test('a template is compiled once and renders fresh randomness each time', () => {
    const t = compileTemplate('{{ random 12 }}', opts);
    expect(t.render({})).toMatch(/^[A-Za-z0-9]{12}$/);
    expect(t.render({})).not.toBe(t.render({}));
  });

  test.each([
    ['{{ if .A }}x', 'missing {{end}}'],
    ['x{{ end }}', 'unexpected {{end}}'],
    ['{{ range .A }}{{ end }}', '{{range}} is not supported'],
    ['{{/* open }}', 'unclosed comment'],
  ])('%s is a 400 naming the field', (t, msg) => {
    expect(() => compileTemplate(t, { field: 'deletion_ldif' })).toThrow(`invalid deletion_ldif: ${msg}`);
  });
});
