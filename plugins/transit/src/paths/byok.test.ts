import {
  constants,
  createCipheriv,
  createDecipheriv,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  publicEncrypt,
  randomBytes,
  sign as nodeSign,
  verify as nodeVerify,
} from 'node:crypto';
import { b64, transitTest, type TransitTest } from './test-backend.js';

jest.setTimeout(120000);
const bad = { status: 400 };

/** Wraps material exactly as the spec describes, with node:crypto only (independent of the engine's code). */
function wrapForImport(wrappingPem: string, material: Buffer, hash = 'sha256'): string {
  const ephemeral = randomBytes(32);
  const head = publicEncrypt({ key: createPublicKey(wrappingPem), padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: hash }, ephemeral);
  const c = createCipheriv('id-aes256-wrap-pad', ephemeral, Buffer.from('a65959a6', 'hex'));
  return Buffer.concat([head, c.update(material), c.final()]).toString('base64');
}

async function wrappingPem(t: TransitTest): Promise<string> {
  return (await t.read('wrapping_key'))?.data?.public_key as string;
}

describe('BYOK import, import_version, byok-export and export', () => {
  let t: TransitTest;
  let pem: string;
  beforeAll(async () => {
    t = await transitTest();
    pem = await wrappingPem(t);
  });

  it('serves a stable 4096-bit RSA wrapping key', async () => {
    expect(createPublicKey(pem).asymmetricKeyDetails?.modulusLength).toBe(4096);
    expect(await wrappingPem(t)).toBe(pem);
  });

  it('an imported AES key decrypts what was encrypted outside, and the reverse', async () => {
    const key = randomBytes(32);
    await t.write('keys/aes/import', { type: 'aes256-gcm96', ciphertext: wrapForImport(pem, key, 'sha512'), hash_function: 'SHA512' });
    expect((await t.read('keys/aes'))?.data).toMatchObject({ imported: true, type: 'aes256-gcm96' });

    const nonce = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', key, nonce);
    const outside = Buffer.concat([nonce, c.update('made outside'), c.final(), c.getAuthTag()]);
    const dec = await t.write('decrypt/aes', { ciphertext: 'service:v1:' + outside.toString('base64') });
    expect(Buffer.from(dec?.data?.plaintext as string, 'base64').toString()).toBe('made outside');

    const ct = (await t.write('encrypt/aes', { plaintext: b64('made inside') }))?.data?.ciphertext as string;
    const raw = Buffer.from(ct.split(':')[2]!, 'base64');
    const d = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    d.setAuthTag(raw.subarray(raw.length - 16));
    expect(Buffer.concat([d.update(raw.subarray(12, raw.length - 16)), d.final()]).toString()).toBe('made inside');
  });

  it('rejects a wrong key size, a wrong hash_function, garbage, hmac type and an existing name', async () => {
    await expect(t.write('keys/x/import', { type: 'aes256-gcm96', ciphertext: wrapForImport(pem, randomBytes(16)) })).rejects.toMatchObject(bad);
    await expect(t.write('keys/x/import', { type: 'aes256-gcm96', ciphertext: wrapForImport(pem, randomBytes(32)), hash_function: 'SHA1' })).rejects.toMatchObject(bad);
    await expect(t.write('keys/x/import', { type: 'aes256-gcm96', ciphertext: b64('short') })).rejects.toMatchObject(bad);
    await expect(t.write('keys/x/import', { type: 'hmac', ciphertext: wrapForImport(pem, randomBytes(32)) })).rejects.toMatchObject(bad);
    await expect(t.write('keys/aes/import', { type: 'aes256-gcm96', ciphertext: wrapForImport(pem, randomBytes(32)) })).rejects.toMatchObject(bad);
  });

  it('an imported RSA private key signs what node:crypto verifies', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const der = privateKey.export({ type: 'pkcs8', format: 'der' });
    await t.write('keys/rsa/import', { type: 'rsa-2048', ciphertext: wrapForImport(pem, der) });
    const sig = (await t.write('sign/rsa', { input: b64('m'), signature_algorithm: 'pkcs1v15' }))?.data?.signature as string;
    expect(nodeVerify('sha256', Buffer.from('m'), publicKey, Buffer.from(sig.split(':')[2]!, 'base64'))).toBe(true);
    await expect(t.write('keys/rsa2/import', { type: 'rsa-3072', ciphertext: wrapForImport(pem, der) })).rejects.toMatchObject(bad);
  });

  it('public-key-only import verifies; import_version then adds the matching private key', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    await t.write('keys/ec/import', { type: 'ecdsa-p256', public_key: publicKey.export({ type: 'spki', format: 'pem' }) });
    const outsideSig = nodeSign('sha256', Buffer.from('m'), privateKey).toString('base64');
    expect((await t.write('verify/ec', { input: b64('m'), signature: 'service:v1:' + outsideSig }))?.data?.valid).toBe(true);
    await expect(t.write('sign/ec', { input: b64('m') })).rejects.toMatchObject(bad);

    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'der' });
    await expect(t.write('keys/ec/import_version', { ciphertext: wrapForImport(pem, other), version: 1 })).rejects.toMatchObject(bad);
    await t.write('keys/ec/import_version', { ciphertext: wrapForImport(pem, privateKey.export({ type: 'pkcs8', format: 'der' })) });
    expect((await t.read('keys/ec'))?.data?.latest_version).toBe(1);
    const sig = (await t.write('sign/ec', { input: b64('m') }))?.data?.signature as string;
    expect(nodeVerify('sha256', Buffer.from('m'), publicKey, Buffer.from(sig.split(':')[2]!, 'base64'))).toBe(true);
  });

  it('import_version only on imported keys; rotation needs allow_rotation and then ends imports', async () => {
    await t.write('keys/gen', {});
    await expect(t.write('keys/gen/import_version', { ciphertext: wrapForImport(pem, randomBytes(32)) })).rejects.toMatchObject(bad);
    await expect(t.write('keys/aes/rotate', {})).rejects.toMatchObject(bad);
    await t.write('keys/aes/import_version', { ciphertext: wrapForImport(pem, randomBytes(32)) });
    expect((await t.read('keys/aes'))?.data?.latest_version).toBe(2);

    await t.write('keys/rot/import', { type: 'chacha20-poly1305', ciphertext: wrapForImport(pem, randomBytes(32)), allow_rotation: true });
    await t.write('keys/rot/rotate', {});
    await expect(t.write('keys/rot/import_version', { ciphertext: wrapForImport(pem, randomBytes(32)) })).rejects.toMatchObject(bad);
  });

  it('byok-export moves a key to another mount, where it decrypts the first mount ciphertext', async () => {
    const other = await transitTest();
    await t.write('keys/dest/import', { type: 'rsa-4096', public_key: await wrappingPem(other) });
    await t.write('keys/src', { exportable: true });
    await t.write('keys/src/rotate', {});
    const ct = (await t.write('encrypt/src', { plaintext: b64('travels') }))?.data?.ciphertext;
    const all = (await t.read('byok-export/dest/src'))?.data;
    expect(Object.keys(all?.keys as object)).toEqual(['1', '2']);
    const latest = (await t.read('byok-export/dest/src/latest'))?.data?.keys as Record<string, string>;
    await other.write('keys/copy/import', { type: 'aes256-gcm96', ciphertext: latest['2'] });
    // The copy's first (imported) version holds the source's version 2.
    const relabelled = (ct as string).replace('service:v2:', 'service:v1:');
    expect((await other.write('decrypt/copy', { ciphertext: relabelled }))?.data?.plaintext).toBe(b64('travels'));

    await t.write('keys/locked', {});
    await expect(t.read('byok-export/dest/locked')).rejects.toMatchObject(bad);
    await expect(t.read('byok-export/aes/src')).rejects.toMatchObject(bad);
  });

  it('export formats per key type', async () => {
    await t.write('keys/xr', { type: 'rsa-2048', exportable: true });
    await t.write('keys/xe', { type: 'ecdsa-p384', exportable: true });
    await t.write('keys/xd', { type: 'ed25519', exportable: true });
    await t.write('keys/xs', { exportable: true });
    const one = async (path: string, format = '') => ((await t.read(path, format ? { format } : {}))?.data?.keys as Record<string, string>)['1']!;
    expect(await one('export/encryption-key/xr')).toContain('-----BEGIN RSA PRIVATE KEY-----');
    expect(await one('export/signing-key/xe')).toContain('-----BEGIN EC PRIVATE KEY-----');
    expect(await one('export/signing-key/xe', 'pem')).toContain('-----BEGIN PRIVATE KEY-----');
    const der = Buffer.from(await one('export/signing-key/xr', 'der'), 'base64');
    expect(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }).asymmetricKeyType).toBe('rsa');
    expect(Buffer.from(await one('export/signing-key/xd'), 'base64')).toHaveLength(64);
    expect(Buffer.from(await one('export/public-key/xd'), 'base64')).toHaveLength(32);
    expect(await one('export/public-key/xe')).toContain('-----BEGIN PUBLIC KEY-----');
    expect(Buffer.from(await one('export/encryption-key/xs', 'raw'), 'base64')).toHaveLength(32);
    await expect(t.read('export/encryption-key/xs', { format: 'pem' })).rejects.toMatchObject(bad);
    await expect(t.read('export/signing-key/xr', { format: 'raw' })).rejects.toMatchObject(bad);
    await expect(t.read('export/encryption-key/gen')).rejects.toMatchObject(bad);
    await expect(t.read('export/public-key/xs')).rejects.toMatchObject(bad);
    await expect(t.read('export/encryption-key/xs/7')).rejects.toMatchObject(bad);
  });
});

describe('backup and restore', () => {
  it('round-trips a key with all versions into another mount, only with allow_plaintext_backup', async () => {
    const a = await transitTest();
    const b = await transitTest();
    await a.write('keys/k', { type: 'xchacha20-poly1305' });
    // Vault's status and text, which clients match.
    await expect(a.read('backup/k')).rejects.toMatchObject({ status: 500, message: expect.stringContaining('plaintext backup is disallowed on the policy') });
    await a.write('keys/k/config', { allow_plaintext_backup: true });
    const ct1 = (await a.write('encrypt/k', { plaintext: b64('one') }))?.data?.ciphertext;
    await a.write('keys/k/rotate', {});
    const backup = (await a.read('backup/k'))?.data?.backup as string;
    await b.write('restore', { backup });
    expect((await b.write('decrypt/k', { ciphertext: ct1 }))?.data?.plaintext).toBe(b64('one'));
    expect((await b.read('keys/k'))?.data?.latest_version).toBe(2);
    await expect(b.write('restore', { backup })).rejects.toMatchObject({ status: 500, message: 'key "k" already exists' });
    await b.write('restore', { backup, force: true });
    await b.write('restore/renamed', { backup });
    expect((await b.write('decrypt/renamed', { ciphertext: ct1 }))?.data?.plaintext).toBe(b64('one'));
    await expect(b.write('restore/x', { backup: b64('{"format":1,"policy":{}}') })).rejects.toMatchObject(bad);
    await expect(b.write('restore/x', { backup: '!!' })).rejects.toMatchObject(bad);
  });
});
