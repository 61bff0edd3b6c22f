import { StrongroomError } from '@strongroom/sdk-plugin';
import {
  DEFAULT_PASSWORD_POLICY_TEXT,
  defaultPasswordPolicy,
  generatePassword,
  parsePasswordPolicy,
  satisfiesPolicy,
  testGenerate,
  type PasswordPolicy,
} from './password-policy.js';
import { createUniformRandom } from './random.js';

const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const DIGITS = '0123456789';

function errorOf(fn: () => unknown): StrongroomError {
  try {
    fn();
  } catch (err) {
    if (err instanceof StrongroomError) return err;
    throw err;
  }
  throw new Error('expected an error');
}

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
    const pw = generatePassword(p);
    expect(Array.from(pw)).toHaveLength(6);
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
});

describe('generatePassword', () => {
  const policies: Array<[string, string]> = [
    ['the default database policy', DEFAULT_PASSWORD_POLICY_TEXT],
    [
      'tight minimums (every position is required)',
      `length = 4\nrule "charset" { charset = "${LOWER}"\n min-chars = 1 }\nrule "charset" { charset = "${UPPER}"\n min-chars = 1 }\nrule "charset" { charset = "${DIGITS}"\n min-chars = 1 }\nrule "charset" { charset = "!@#"\n min-chars = 1 }`,
    ],
    ['overlapping charsets', `length = 10\nrule "charset" { charset = "abc"\n min-chars = 3 }\nrule "charset" { charset = "cde"\n min-chars = 3 }`],
    ['mostly one rare charset', `length = 20\nrule "charset" { charset = "${LOWER}${UPPER}"\n min-chars = 1 }\nrule "charset" { charset = "${DIGITS}"\n min-chars = 18 }`],
  ];
  it.each(policies)('every one of 1,000 passwords satisfies %s', (_n, text) => {
    const policy = parsePasswordPolicy(text);
    const alphabet = new Set(policy.alphabet);
    const seen = new Set<string>();
    const failures: string[] = [];
    for (let i = 0; i < 1000; i++) {
      const pw = generatePassword(policy);
      if (!satisfiesPolicy(policy, pw) || !Array.from(pw).every((c) => alphabet.has(c))) failures.push(pw);
      seen.add(pw);
    }
    expect(failures).toEqual([]);
    expect(seen.size).toBeGreaterThan(990);
  });

  it('default policy: 20 characters with upper, lower, digit and dash', () => {
    const pw = generatePassword(defaultPasswordPolicy());
    expect(pw).toHaveLength(20);
    expect(pw).toMatch(/[A-Z]/);
    expect(pw).toMatch(/[a-z]/);
    expect(pw).toMatch(/[0-9]/);
    expect(pw).toMatch(/-/);
    expect(pw).toMatch(/^[A-Za-z0-9-]+$/);
  });

  it('has no modulo bias (chi-square over a 129-character charset)', () => {
    // 256 % 129 = 127: a modulo-reduced byte would make two characters half as likely.
    const charset = Array.from({ length: 129 }, (_, i) => String.fromCodePoint(0x100 + i)).join('');
    const policy = parsePasswordPolicy(`length = 100\nrule "charset" { charset = "${charset}" }`);
    const counts = new Map<string, number>();
    const passwords = 520;
    for (let i = 0; i < passwords; i++) for (const c of generatePassword(policy)) counts.set(c, (counts.get(c) ?? 0) + 1);
    const draws = passwords * 100;
    const expected = draws / 129;
    let chi2 = 0;
    for (const c of policy.alphabet) chi2 += ((counts.get(c) ?? 0) - expected) ** 2 / expected;
    // Wilson-Hilferty quantile of chi-square(128) at z = 3.9 (false alarm ~5e-5): about 200.
    // A modulo-biased generator lands near 128 + 195 here.
    const k = 128;
    const limit = k * (1 - 2 / (9 * k) + 3.9 * Math.sqrt(2 / (9 * k))) ** 3;
    expect(chi2).toBeLessThan(limit);
  });
});

describe('createUniformRandom', () => {
  it('rejects draws from the incomplete last block instead of reducing them', () => {
    // n = 3: bytes 255 is at or above the limit 255 and must be redrawn; 254 % 3 = 2.
    const feed = [255, 255, 254, 7];
    const rnd = createUniformRandom((size) => Buffer.from(feed.splice(0, size).concat(Array(Math.max(0, size - feed.length)).fill(0))));
    expect(rnd.index(3)).toBe(2);
    expect(rnd.index(3)).toBe(1);
  });

  it('uses two bytes past 256 and never returns out of range', () => {
    const rnd = createUniformRandom(() => Buffer.from([0xff, 0xff, 0x01, 0x02, ...Array(252).fill(0)]));
    // 65535 >= limit for n = 300 (65536 - 65536 % 300 = 65400), so the next pair 0x0102 = 258 is used.
    expect(rnd.index(300)).toBe(258);
    const real = createUniformRandom();
    for (let i = 0; i < 1000; i++) {
      const x = real.index(7);
      expect(x >= 0 && x < 7 && Number.isInteger(x)).toBe(true);
    }
    expect(() => real.index(0)).toThrow(RangeError);
  });

  it('covers every index', () => {
    const rnd = createUniformRandom();
    const seen = new Set<number>();
    for (let i = 0; i < 2000; i++) seen.add(rnd.index(10));
    expect([...seen].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });
});

describe('testGenerate', () => {
  it('accepts a satisfiable policy', () => {
    expect(() => testGenerate(defaultPasswordPolicy())).not.toThrow();
  });

  it('refuses a policy that cannot produce a valid password', () => {
    // Hand-built (parse would refuse it): the minimums exceed the length.
    const impossible: PasswordPolicy = {
      length: 4,
      rules: [
        { charset: 'ab', chars: ['a', 'b'], minChars: 3 },
        { charset: 'cd', chars: ['c', 'd'], minChars: 3 },
      ],
      alphabet: ['a', 'b', 'c', 'd'],
    };
    const err = errorOf(() => testGenerate(impossible));
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/unable to generate/);
  });
});
