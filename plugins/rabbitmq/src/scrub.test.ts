import { scrubSecrets } from './scrub.js';

describe('scrubSecrets', () => {
  it('removes every occurrence, raw and URL-encoded, longest first; empty secrets are ignored', () => {
    expect(scrubSecrets('pw=a+b/c and a%2Bb%2Fc and a+b/c', ['a+b/c'])).toBe('pw=[redacted] and [redacted] and [redacted]');
    expect(scrubSecrets('abcdef', ['abc', 'abcdef'])).toBe('[redacted]');
    expect(scrubSecrets('nothing here', ['', 'zzz'])).toBe('nothing here');
  });
});
