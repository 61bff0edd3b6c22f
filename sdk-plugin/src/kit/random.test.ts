import { fillRandom, randomBase62, takeRandom } from './random';

describe('the random pool', () => {
  it('hands out each byte once, across refills', () => {
    // 16-byte draws over several pool refills: a repeated slice would show as a duplicate.
    const seen = new Set<string>();
    for (let i = 0; i < 5000; i++) seen.add(takeRandom(16).toString('hex'));
    expect(seen.size).toBe(5000);
    const out = Buffer.alloc(40);
    fillRandom(out, 4, 32);
    expect(out.subarray(0, 4).equals(Buffer.alloc(4))).toBe(true);
    expect(out.subarray(36).equals(Buffer.alloc(4))).toBe(true);
    expect(out.subarray(4, 36).equals(Buffer.alloc(32))).toBe(false);
  });

  it('makes base62 strings of the length asked, every symbol in use', () => {
    const s = Array.from({ length: 200 }, () => randomBase62(24)).join('');
    expect(s).toMatch(/^[A-Za-z0-9]{4800}$/);
    expect(new Set(s).size).toBe(62);
  });
});
