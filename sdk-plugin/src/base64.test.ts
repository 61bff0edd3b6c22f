import { isRawUrlBase64, isStdBase64 } from './base64';

describe('isStdBase64', () => {
  it.each(['', 'QQ==', 'QUI=', 'QUJD', 'a+/9', 'AAAAAAAA'])('accepts %p', (s) => expect(isStdBase64(s)).toBe(true));
  it.each(['Q', 'QQ', 'QQ=', 'Q===', '====', 'QQ==QQ==', 'QU=D', 'a-_9', 'QUJD\n', ' QUJD', 'QUJ*'])('refuses %p', (s) => expect(isStdBase64(s)).toBe(false));
  it('agrees with Node on 10 MB and 32 MB inputs without overflowing (the old regex threw RangeError)', () => {
    const big = Buffer.alloc(24 * 1024 * 1024, 7).toString('base64');
    expect(big.length).toBeGreaterThan(32 * 1000 * 1000);
    expect(isStdBase64(big)).toBe(true);
    expect(isStdBase64(`${big.slice(0, -4)}A*A=`)).toBe(false);
    expect(isStdBase64(Buffer.alloc(10 * 1024 * 1024 + 1, 1).toString('base64'))).toBe(true);
  });
});

describe('isRawUrlBase64', () => {
  it.each(['', 'QQ', 'QUI', 'QUJD', 'a-_9'])('accepts %p', (s) => expect(isRawUrlBase64(s)).toBe(true));
  it.each(['Q', 'QQ==', 'a+/9', 'QUJDQ'])('refuses %p', (s) => expect(isRawUrlBase64(s)).toBe(false));
  it('handles a 32 MB input', () => {
    expect(isRawUrlBase64(Buffer.alloc(24 * 1024 * 1024, 9).toString('base64url'))).toBe(true);
  });
});
