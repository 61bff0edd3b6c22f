import { hchacha20, xchachaOpen, xchachaSeal } from './xchacha20.js';

const hex = (s: string) => Buffer.from(s.replace(/[\s:]/g, ''), 'hex');
const range = (from: number, n: number) => Buffer.from(Array.from({ length: n }, (_, i) => from + i));

describe('HChaCha20 (draft-irtf-cfrg-xchacha-03 section 2.2.1)', () => {
  it('derives the documented subkey', () => {
    const key = range(0, 32);
    const nonce = hex('000000090000004a0000000031415927');
    expect(hchacha20(key, nonce).toString('hex')).toBe(
      '82413b4227b27bfed30e42508a877d73a0f9e4d58a74a853c12ec41326d3ecdc',
    );
  });
});

describe('XChaCha20-Poly1305 AEAD (draft-irtf-cfrg-xchacha-03 appendix A.3.1)', () => {
  const plaintext = Buffer.from(
    "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.",
  );
  const aad = hex('50515253c0c1c2c3c4c5c6c7');
  const key = range(0x80, 32);
  const iv = range(0x40, 24);
  const expectedCt =
    'bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b4522f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff921f9664c97637da9768812f615c68b13b52e';
  const expectedTag = 'c0875924c1c7987947deafd8780acf49';

  it('encrypts to the documented ciphertext and tag', () => {
    expect(xchachaSeal(key, iv, plaintext, aad).toString('hex')).toBe(expectedCt + expectedTag);
  });

  it('decrypts the documented ciphertext', () => {
    expect(xchachaOpen(key, iv, hex(expectedCt + expectedTag), aad).toString()).toBe(plaintext.toString());
  });

  it('rejects a tampered ciphertext or wrong associated data', () => {
    const sealed = hex(expectedCt + expectedTag);
    sealed[3] ^= 1;
    expect(() => xchachaOpen(key, iv, sealed, aad)).toThrow();
    expect(() => xchachaOpen(key, iv, hex(expectedCt + expectedTag), Buffer.from('x'))).toThrow();
  });
});
