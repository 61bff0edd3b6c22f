import { StrongroomError } from '../errors.js';
import { renderUsernameTemplate, validateUsernameTemplate } from './username-template.js';

const data = { DisplayName: 'token-approle-long', RoleName: 'readonly-role' };

describe('renderUsernameTemplate', () => {
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
