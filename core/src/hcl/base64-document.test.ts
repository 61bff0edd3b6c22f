import { decodeBase64Document } from './base64-document.js';

describe('decodeBase64Document', () => {
  const hcl = 'length = 8\nrule "charset" { charset = "\u00e9xyz" }';
  it('decodes a base64 document, wrapped or not', () => {
    const b64 = Buffer.from(hcl).toString('base64');
    expect(decodeBase64Document(b64)).toBe(hcl);
    expect(decodeBase64Document(b64.replace(/(.{16})/g, '$1\n'))).toBe(hcl);
  });
  it('leaves HCL, JSON and base64 of non-documents alone', () => {
    expect(decodeBase64Document(hcl)).toBe(hcl);
    expect(decodeBase64Document('{"length":8}')).toBe('{"length":8}');
    // "abcd" is valid base64 but decodes to bytes that are not UTF-8 text.
    expect(decodeBase64Document('abcd')).toBe('abcd');
    // Valid base64 of plain words is not a document either.
    const words = Buffer.from('just words').toString('base64');
    expect(decodeBase64Document(words)).toBe(words);
  });
});
