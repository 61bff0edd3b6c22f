import { createDecipheriv, createHmac, createPublicKey, createPrivateKey, verify as nodeVerify, constants, privateDecrypt } from 'node:crypto';
jest.setTimeout(60000);
import { StrongroomError } from '@strongroom/sdk-plugin';
import { KEY_TYPES, isSymmetric, isRsa, isEcdsa, type KeyType } from './key-types.js';
import { decrypt, encrypt, hmac, sign, verify, verifyHmac } from './operations.js';
import { addVersion, generateVersion, loadPolicy } from './policy.js';
import { exportKeys } from './export.js';
import { makeKey } from './test-helpers.js';

const pt = Buffer.from('the quick brown fox');
const ctx = Buffer.from('tenant-1');

function status(fn: () => unknown): number | undefined {
  try {
    fn();
  } catch (e) {
    return e instanceof StrongroomError ? e.status : -1;
  }
  return undefined;
}

const encTypes = KEY_TYPES.filter((t) => isSymmetric(t) || isRsa(t));
const signTypes = KEY_TYPES.filter((t) => t === 'ed25519' || isEcdsa(t) || isRsa(t));

describe('encrypt/decrypt round trips', () => {
  it.each(encTypes)('%s', async (t: KeyType) => {
    const p = await makeKey(t);
    const ct = encrypt(p, { plaintext: pt });
    expect(ct).toMatch(/^service:v1:[A-Za-z0-9+/=]+$/);
    expect(decrypt(p, { ciphertext: ct }).plaintext.equals(pt)).toBe(true);
  });

  it.each(KEY_TYPES.filter(isSymmetric))('%s with associated data and derivation', async (t) => {
    const p = await makeKey(t, { derived: true });
    const aad = Buffer.from('header');
    const ct = encrypt(p, { plaintext: pt, context: ctx, associatedData: aad });
    expect(decrypt(p, { ciphertext: ct, context: ctx, associatedData: aad }).plaintext.equals(pt)).toBe(true);
    expect(status(() => decrypt(p, { ciphertext: ct, context: Buffer.from('other'), associatedData: aad }))).toBe(400);
    expect(status(() => decrypt(p, { ciphertext: ct, context: ctx }))).toBe(400);
    expect(status(() => encrypt(p, { plaintext: pt }))).toBe(400);
  });

  it('rejects tampering, bad base64, a bad prefix and a too-old version with 400', async () => {
    const p = await makeKey('aes256-gcm96');
    const ct = encrypt(p, { plaintext: pt });
    const raw = Buffer.from(ct.slice('service:v1:'.length), 'base64');
    raw[raw.length - 1]! ^= 1;
    expect(status(() => decrypt(p, { ciphertext: 'service:v1:' + raw.toString('base64') }))).toBe(400);
    expect(status(() => decrypt(p, { ciphertext: 'service:v1:%%%' }))).toBe(400);
    expect(status(() => decrypt(p, { ciphertext: 'other:v1:' + raw.toString('base64') }))).toBe(400);
    // Vault's prefix is read (keys migrated from Vault), and tampering is refused through it too.
    expect(decrypt(p, { ciphertext: 'vault:v1:' + ct.slice('service:v1:'.length) }).plaintext).toEqual(pt);
    expect(status(() => decrypt(p, { ciphertext: 'vault:v1:' + raw.toString('base64') }))).toBe(400);
    expect(status(() => decrypt(p, { ciphertext: 'service:v9:' + raw.toString('base64') }))).toBe(400);
    addVersion(p.record, await generateVersion('aes256-gcm96', 32, Date.now()));
    p.record.min_decryption_version = 2;
    expect(status(() => decrypt(p, { ciphertext: ct }))).toBe(400);
  });

  it('encrypts with the latest version, or a chosen one at or above min_encryption_version', async () => {
    const p = await makeKey('chacha20-poly1305');
    addVersion(p.record, await generateVersion('chacha20-poly1305', 32, Date.now()));
    expect(encrypt(p, { plaintext: pt })).toMatch(/^service:v2:/);
    expect(encrypt(p, { plaintext: pt, keyVersion: 1 })).toMatch(/^service:v1:/);
    p.record.min_encryption_version = 2;
    expect(status(() => encrypt(p, { plaintext: pt, keyVersion: 1 }))).toBe(400);
    expect(status(() => encrypt(p, { plaintext: pt, keyVersion: 3 }))).toBe(400);
  });

  it('refuses every data operation on a soft-deleted key', async () => {
    const p = await makeKey('aes256-gcm96');
    const ct = encrypt(p, { plaintext: pt });
    p.record.soft_deleted = true;
    expect(status(() => encrypt(p, { plaintext: pt }))).toBe(400);
    expect(status(() => decrypt(p, { ciphertext: ct }))).toBe(400);
    expect(status(() => hmac(p, { input: pt, algorithm: 'sha2-256' }))).toBe(400);
  });
});

describe('convergent encryption', () => {
  it.each(KEY_TYPES.filter(isSymmetric))('%s is deterministic per (context, plaintext)', async (t) => {
    const p = await makeKey(t, { derived: true, convergent_encryption: true });
    const a = encrypt(p, { plaintext: pt, context: ctx });
    expect(encrypt(p, { plaintext: pt, context: ctx })).toBe(a);
    expect(encrypt(p, { plaintext: Buffer.from('other'), context: ctx })).not.toBe(a);
    expect(encrypt(p, { plaintext: pt, context: Buffer.from('tenant-2') })).not.toBe(a);
    expect(decrypt(p, { ciphertext: a, context: ctx }).plaintext.equals(pt)).toBe(true);
  });

  it('non-convergent keys never repeat a ciphertext', async () => {
    const p = await makeKey('aes256-gcm96');
    expect(encrypt(p, { plaintext: pt })).not.toBe(encrypt(p, { plaintext: pt }));
  });

  it('requires derivation', () => {
    expect(makeKey('aes256-gcm96', { convergent_encryption: true })).rejects.toThrow(/derivation/);
  });
});

describe('known answers against node:crypto with exported keys', () => {
  it('AES-256-GCM ciphertext decrypts with the exported key (nonce|ct|tag layout)', async () => {
    const p = await makeKey('aes256-gcm96', { exportable: true });
    const ct = encrypt(p, { plaintext: pt, associatedData: Buffer.from('ad') });
    const key = Buffer.from(exportKeys(p, 'encryption-key', 'latest', '')['1']!, 'base64');
    const raw = Buffer.from(ct.split(':')[2]!, 'base64');
    const d = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    d.setAAD(Buffer.from('ad'));
    d.setAuthTag(raw.subarray(raw.length - 16));
    expect(Buffer.concat([d.update(raw.subarray(12, raw.length - 16)), d.final()]).equals(pt)).toBe(true);
  });

  it('RSA ciphertext is OAEP-SHA256 under the exported private key', async () => {
    const p = await makeKey('rsa-2048', { exportable: true });
    const ct = encrypt(p, { plaintext: pt });
    const pem = exportKeys(p, 'encryption-key', '1', '')['1']!;
    expect(pem).toContain('BEGIN RSA PRIVATE KEY');
    const out = privateDecrypt({ key: createPrivateKey(pem), padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(ct.split(':')[2]!, 'base64'));
    expect(out.equals(pt)).toBe(true);
  });

  it.each(['aes256-gcm96', 'hmac', 'ed25519'] as KeyType[])('hmac of a %s key equals node HMAC under the exported hmac-key', async (t) => {
    const p = await makeKey(t, { exportable: true });
    const mac = hmac(p, { input: pt, algorithm: 'sha2-512' });
    const key = Buffer.from(exportKeys(p, 'hmac-key', 'latest', '')['1']!, 'base64');
    expect(mac).toBe('service:v1:' + createHmac('sha512', key).update(pt).digest('base64'));
    expect(verifyHmac(p, { input: pt, hmac: mac, algorithm: 'sha2-512' })).toBe(true);
    expect(verifyHmac(p, { input: Buffer.from('x'), hmac: mac, algorithm: 'sha2-512' })).toBe(false);
  });

  it('every version has its own HMAC secret', async () => {
    const p = await makeKey('aes256-gcm96');
    addVersion(p.record, await generateVersion('aes256-gcm96', 32, Date.now()));
    expect(hmac(p, { input: pt, algorithm: 'sha2-256', keyVersion: 1 }).slice(11)).not.toBe(
      hmac(p, { input: pt, algorithm: 'sha2-256', keyVersion: 2 }).slice(11),
    );
  });
});

describe('sign and verify', () => {
  it.each(signTypes)('%s signature verifies with node:crypto and the exported public key', async (t) => {
    const p = await makeKey(t);
    const { signature } = sign(p, { input: pt, hashAlgorithm: 'sha2-256' });
    expect(verify(p, { input: pt, signature, hashAlgorithm: 'sha2-256' })).toBe(true);
    expect(verify(p, { input: Buffer.from('tampered'), signature, hashAlgorithm: 'sha2-256' })).toBe(false);
    const pub = createPublicKey(exportKeys(p, 'public-key', 'latest', 'pem')['1']!);
    const sig = Buffer.from(signature.split(':')[2]!, 'base64');
    const ok =
      t === 'ed25519'
        ? nodeVerify(null, pt, pub, sig)
        : isRsa(t)
          ? nodeVerify('sha256', pt, { key: pub, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_AUTO }, sig)
          : nodeVerify('sha256', pt, pub, sig);
    expect(ok).toBe(true);
  });

  it('ECDSA jws marshaling gives a base64url r||s signature', async () => {
    const p = await makeKey('ecdsa-p384');
    const { signature } = sign(p, { input: pt, hashAlgorithm: 'sha2-384', marshalingAlgorithm: 'jws' });
    const raw = Buffer.from(signature.split(':')[2]!, 'base64url');
    expect(raw.length).toBe(96);
    expect(verify(p, { input: pt, signature, hashAlgorithm: 'sha2-384', marshalingAlgorithm: 'jws' })).toBe(true);
  });

  it('RSA pkcs1v15, prehashed pkcs1v15 and PSS with salt_length hash', async () => {
    const p = await makeKey('rsa-2048');
    const pub = p.version(1).publicKey!;
    const s1 = sign(p, { input: pt, hashAlgorithm: 'sha2-256', signatureAlgorithm: 'pkcs1v15' }).signature;
    expect(nodeVerify('sha256', pt, pub, Buffer.from(s1.split(':')[2]!, 'base64'))).toBe(true);
    const digest = require('node:crypto').createHash('sha256').update(pt).digest();
    const s2 = sign(p, { input: digest, hashAlgorithm: 'sha2-256', signatureAlgorithm: 'pkcs1v15', prehashed: true }).signature;
    expect(s2).toBe(s1);
    expect(verify(p, { input: digest, signature: s2, hashAlgorithm: 'sha2-256', signatureAlgorithm: 'pkcs1v15', prehashed: true })).toBe(true);
    const s3 = sign(p, { input: pt, hashAlgorithm: 'sha2-512', saltLength: 'hash' }).signature;
    expect(nodeVerify('sha512', pt, { key: pub, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 64 }, Buffer.from(s3.split(':')[2]!, 'base64'))).toBe(true);
  });

  it('derived ed25519: same context gives the same key and signature', async () => {
    const p = await makeKey('ed25519', { derived: true });
    const a = sign(p, { input: pt, hashAlgorithm: 'sha2-256', context: ctx }).signature;
    expect(sign(p, { input: pt, hashAlgorithm: 'sha2-256', context: ctx }).signature).toBe(a);
    expect(sign(p, { input: pt, hashAlgorithm: 'sha2-256', context: Buffer.from('x') }).signature).not.toBe(a);
    expect(verify(p, { input: pt, signature: a, hashAlgorithm: 'sha2-256', context: ctx })).toBe(true);
    expect(verify(p, { input: pt, signature: a, hashAlgorithm: 'sha2-256', context: Buffer.from('x') })).toBe(false);
  });

  it('symmetric keys cannot sign', async () => {
    const p = await makeKey('aes256-gcm96');
    expect(status(() => sign(p, { input: pt, hashAlgorithm: 'sha2-256' }))).toBe(400);
  });

  it('a loaded policy survives the storage codec', async () => {
    const p = await makeKey('ecdsa-p521');
    const { signature } = sign(p, { input: pt, hashAlgorithm: 'sha2-512' });
    const again = loadPolicy(JSON.parse(JSON.stringify(p.record)));
    expect(verify(again, { input: pt, signature, hashAlgorithm: 'sha2-512' })).toBe(true);
  });
});
