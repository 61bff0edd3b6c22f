import { errorOf } from '../harness.js';
import { defaultPasswordPolicy, generatePassword, passwordPolicy, satisfiesPolicy, testGenerate, type PasswordPolicy } from './generate.js';

const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const DIGITS = '0123456789';

describe('passwordPolicy', () => {
  it('deduplicates charsets by code point and builds the alphabet', () => {
    expect(passwordPolicy({ length: 12, rules: [{ charset: 'aabbc', minChars: 2 }, { charset: '0\u{1F511}\u{1F511}' }] })).toEqual({
      length: 12,
      rules: [
        { charset: 'aabbc', chars: ['a', 'b', 'c'], minChars: 2 },
        { charset: '0\u{1F511}\u{1F511}', chars: ['0', '\u{1F511}'], minChars: 0 },
      ],
      alphabet: ['a', 'b', 'c', '0', '\u{1F511}'],
    });
  });

  const bad: Array<[string, Parameters<typeof passwordPolicy>[0], RegExp]> = [
    ['length too small', { length: 3, rules: [{ charset: 'abc' }] }, /policy: length: must be between 4 and 100/],
    ['length too large', { length: 101, rules: [{ charset: 'abc' }] }, /policy: length: must be between 4 and 100/],
    ['a fractional length', { length: 10.5, rules: [{ charset: 'abc' }] }, /policy: length: must be between 4 and 100/],
    ['no rules', { length: 10, rules: [] }, /at least one rule "charset"/],
    ['an empty charset', { length: 10, rules: [{ charset: 'a' }, { charset: '' }] }, /rule "charset" #2: charset: must not be empty/],
    ['negative min-chars', { length: 10, rules: [{ charset: 'a', minChars: -1 }] }, /min-chars: must be 0 or more/],
    ['minimums above the length', { length: 4, rules: [{ charset: 'a', minChars: 3 }, { charset: 'b', minChars: 2 }] }, /add up to 5, more than length 4/],
  ];
  it.each(bad)('refuses %s with a 400 naming the field', (_n, spec, message) => {
    const err = errorOf(() => passwordPolicy(spec));
    expect(err.status).toBe(400);
    expect(err.message).toMatch(message);
  });

  it('the shared default cannot be weakened by a caller', () => {
    const policy = defaultPasswordPolicy();
    expect(() => {
      (policy as { length: number }).length = 4;
    }).toThrow(TypeError);
    expect(() => (policy.rules[0] as { minChars: number }).minChars++).toThrow(TypeError);
    expect(defaultPasswordPolicy().length).toBe(20);
  });
});

describe('generatePassword', () => {
  const policies: Array<[string, PasswordPolicy]> = [
    ['the default database policy', defaultPasswordPolicy()],
    [
      'tight minimums (every position is required)',
      passwordPolicy({
        length: 4,
        rules: [LOWER, UPPER, DIGITS, '!@#'].map((charset) => ({ charset, minChars: 1 })),
      }),
    ],
    [
      'overlapping charsets',
      passwordPolicy({ length: 10, rules: [{ charset: 'abc', minChars: 3 }, { charset: 'cde', minChars: 3 }] }),
    ],
    [
      'mostly one rare charset',
      passwordPolicy({ length: 20, rules: [{ charset: LOWER + UPPER, minChars: 1 }, { charset: DIGITS, minChars: 18 }] }),
    ],
  ];
  it.each(policies)('every one of 1,000 passwords satisfies %s', (_n, policy) => {
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
    const policy = passwordPolicy({ length: 100, rules: [{ charset }] });
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
