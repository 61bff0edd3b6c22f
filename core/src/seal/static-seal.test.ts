import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadStaticSeal, SealKeyError } from './static-seal.js';

const dir = mkdtempSync(join(tmpdir(), 'sr-static-seal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function keyFile(content: Buffer | string, mode = 0o600): string {
  const f = join(dir, randomBytes(4).toString('hex'));
  writeFileSync(f, content);
  chmodSync(f, mode); // the mode exactly, whatever the umask (a CI run may use 077)
  return f;
}

const errorOf = (fn: () => unknown): Error => {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected an error');
};

describe('static seal keys', () => {
  const raw = randomBytes(32);

  it.each([
    ['raw', raw],
    ['hex', `${raw.toString('hex')}\n`],
    ['base64', `  ${raw.toString('base64')}\n`],
  ])('reads a %s key file; what it wraps unwraps only at the same path', (_n, content) => {
    const seal = loadStaticSeal({ currentKeyId: 'a', currentKey: `file://${keyFile(content)}`, disabled: false });
    const rec = seal.wrap('core/seal/stored-key', Buffer.from('secret'));
    expect(rec.toString()).not.toContain('secret');
    expect(seal.unwrap('core/seal/stored-key', rec)).toEqual({ plaintext: Buffer.from('secret'), previous: false });
    expect(() => seal.unwrap('core/seal/recovery-key', rec)).toThrow(/current_key \(key id "a"\) does not unwrap the stored key: wrong key/);
    // The same key read as raw bytes opens what the text forms wrapped.
    const same = loadStaticSeal({ currentKeyId: 'a', currentKey: `file://${keyFile(raw)}`, disabled: false });
    expect(same.unwrap('core/seal/stored-key', rec).plaintext.toString()).toBe('secret');
  });

  it('unwraps under the previous key and says so; an unknown key id is named', () => {
    const oldKey = keyFile(randomBytes(32));
    const before = loadStaticSeal({ currentKeyId: 'old', currentKey: `file://${oldKey}`, disabled: false });
    const rec = before.wrap('p', Buffer.from('x'));
    const after = loadStaticSeal({ currentKeyId: 'new', currentKey: `file://${keyFile(randomBytes(32))}`, previousKeyId: 'old', previousKey: `file://${oldKey}`, disabled: false });
    expect(after.unwrap('p', rec).previous).toBe(true);
    expect(after.unwrap('p', after.wrap('p', Buffer.from('x'))).previous).toBe(false);
    const other = loadStaticSeal({ currentKeyId: 'other', currentKey: `file://${oldKey}`, disabled: false });
    expect(() => other.unwrap('p', rec)).toThrow(/wrapped under key id "old", which is neither current_key_id \("other"\)/);
  });

  it('reads env://, and refuses a bad length, a missing variable or file, and a key written in the config, never echoing a value', () => {
    process.env.SR_UNIT_SEAL_KEY = raw.toString('base64');
    expect(loadStaticSeal({ currentKeyId: 'a', currentKey: 'env://SR_UNIT_SEAL_KEY', disabled: false }).currentKeyId).toBe('a');
    delete process.env.SR_UNIT_SEAL_KEY;
    const cases: Array<[string, RegExp]> = [
      [`file://${keyFile(randomBytes(31))}`, /current_key: the key must be 32 bytes/],
      [`file://${keyFile('zz'.repeat(32))}`, /current_key: the key must be 32 bytes/],
      ['env://SR_UNIT_SEAL_KEY', /current_key: the environment variable SR_UNIT_SEAL_KEY is not set/],
      [`file://${join(dir, 'missing')}`, /current_key: the key file ".*missing" cannot be read \(ENOENT\)/],
      [raw.toString('hex'), /current_key: must be "file:\/\/PATH" or "env:\/\/NAME"/],
    ];
    for (const [source, message] of cases) {
      const err = errorOf(() => loadStaticSeal({ currentKeyId: 'a', currentKey: source, disabled: false }));
      expect(err).toBeInstanceOf(SealKeyError);
      expect(err.message).toMatch(/^seal "static": /);
      expect(err.message).toMatch(message);
      expect(err.message).not.toContain(raw.toString('hex'));
    }
  });

  it('warns about a key file readable by group or others', () => {
    expect(loadStaticSeal({ currentKeyId: 'a', currentKey: `file://${keyFile(raw, 0o600)}`, disabled: false }).warnings).toEqual([]);
    const loose = loadStaticSeal({ currentKeyId: 'a', currentKey: `file://${keyFile(raw, 0o644)}`, disabled: false });
    expect(loose.warnings).toEqual([expect.stringMatching(/^seal "static": current_key: the key file ".*" is readable by group or others \(mode 644\)/)]);
  });
});
