import { defaultPasswordPolicy, errorOf, generatePassword } from '@strongroom/sdk-plugin/host';
import { parsePasswordPolicy } from './password-policy.js';

describe('parsePasswordPolicy', () => {
  it('parses the Vault syntax, deduplicating charsets', () => {
    const p = parsePasswordPolicy(`
      length = 12
      rule "charset" {
        charset = "aabbc"
        min-chars = 2
      }
      rule "charset" { charset = "0123" }
    `);
    expect(p).toEqual({
      length: 12,
      rules: [
        { charset: 'aabbc', chars: ['a', 'b', 'c'], minChars: 2 },
        { charset: '0123', chars: ['0', '1', '2', '3'], minChars: 0 },
      ],
      alphabet: ['a', 'b', 'c', '0', '1', '2', '3'],
    });
  });

  it('accepts a base64-encoded document and JSON', () => {
    const text = 'length = 8\nrule "charset" { charset = "xyz"\n min-chars = 1 }';
    const b64 = Buffer.from(text).toString('base64');
    expect(parsePasswordPolicy(b64)).toEqual(parsePasswordPolicy(text));
    const json = JSON.stringify({ length: 8, rule: { charset: { charset: 'xyz', 'min-chars': 1 } } });
    expect(parsePasswordPolicy(json)).toEqual(parsePasswordPolicy(text));
  });

  it('counts characters, not UTF-16 units', () => {
    const p = parsePasswordPolicy('length = 6\nrule "charset" { charset = "\u00e9\u{1F511}" \n min-chars = 2 }');
    expect(p.alphabet).toEqual(['\u00e9', '\u{1F511}']);
    expect(Array.from(generatePassword(p))).toHaveLength(6);
  });

  const bad: Array<[string, string, RegExp]> = [
    ['empty', ' ', /policy: must not be empty/],
    ['missing length', 'rule "charset" { charset = "abc" }', /length: is required/],
    ['length not a number', 'length = "long"\nrule "charset" { charset = "abc" }', /length: must be an integer/],
    ['length too small', 'length = 3\nrule "charset" { charset = "abc" }', /length: must be between 4 and 100/],
    ['length too large', 'length = 101\nrule "charset" { charset = "abc" }', /length: must be between 4 and 100/],
    ['no rules', 'length = 10', /at least one rule "charset"/],
    ['empty charset', 'length = 10\nrule "charset" { charset = "" }', /rule "charset" #1: charset: must not be empty/],
    ['negative min-chars', 'length = 10\nrule "charset" { charset = "a"\n min-chars = -1 }', /min-chars: must be 0 or more/],
    ['unknown rule type', 'length = 10\nrule "regex" { pattern = "a" }', /rule "regex": unknown rule type/],
    ['unknown rule field', 'length = 10\nrule "charset" { charset = "a"\n max-chars = 1 }', /unknown field "max-chars"/],
    ['unknown top-level field', 'length = 10\nlenght = 3\nrule "charset" { charset = "a" }', /unknown field "lenght"/],
    ['min-chars above length', 'length = 4\nrule "charset" { charset = "a"\n min-chars = 3 }\nrule "charset" { charset = "b"\n min-chars = 2 }', /add up to 5, more than length 4/],
    ['syntax error', 'length = \nrule', /line 2, column 1/],
  ];
  it.each(bad)('refuses %s with a 400 naming the field', (_n, text, message) => {
    const err = errorOf(() => parsePasswordPolicy(text));
    expect(err.status).toBe(400);
    expect(err.message).toMatch(message);
  });

  it('parses the default database policy written as HCL into the SDK default', () => {
    const text = ['abcdefghijklmnopqrstuvwxyz', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', '0123456789', '-']
      .map((cs) => `rule "charset" {\n  charset   = "${cs}"\n  min-chars = 1\n}\n`)
      .join('');
    expect(parsePasswordPolicy(`length = 20\n${text}`)).toEqual(defaultPasswordPolicy());
  });
});
