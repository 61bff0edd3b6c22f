/**
 * Migrating transit keys from Vault, through the real binary: a key's
 * material is imported with BYOK (wrapped the way Vault's
 * `keys/:name/import` expects, here with node:crypto only), then data that
 * Vault made with that material (`vault:v1:` ciphertexts, signatures and
 * HMACs, built by this test in Vault's format) decrypts, rewraps and
 * verifies. What the engine writes keeps the `service:v<N>:` prefix.
 */
import { constants, createCipheriv, createHmac, createPublicKey, generateKeyPairSync, publicEncrypt, randomBytes, sign } from 'node:crypto';
import { startDevServer, type RunningServer } from '../helpers/server';

let s: RunningServer;
let wrappingPem: string;
beforeAll(async () => {
  s = await startDevServer();
  expect((await s.api('POST', 'sys/mounts/transit', { type: 'transit' })).status).toBe(204);
  wrappingPem = (await s.api('GET', 'transit/wrapping_key')).body.data.public_key as string;
});
afterAll(async () => {
  await s.stop();
});

const b64 = (b: Buffer | string) => Buffer.from(b).toString('base64');

/** BYOK: RSA-OAEP (SHA-256) of an ephemeral AES-256 key, then the material under it with AES key wrap with padding. */
function wrapForImport(material: Buffer): string {
  const ephemeral = randomBytes(32);
  const head = publicEncrypt({ key: createPublicKey(wrappingPem), padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, ephemeral);
  const kwp = createCipheriv('id-aes256-wrap-pad', ephemeral, Buffer.from('a65959a6', 'hex'));
  return b64(Buffer.concat([head, kwp.update(material), kwp.final()]));
}

/** A ciphertext as Vault's transit writes one for an aes256-gcm96 key: `vault:v1:` + base64(nonce | ciphertext | tag). */
function vaultCiphertext(key: Buffer, plaintext: string, version = 1): string {
  const nonce = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, nonce);
  const body = Buffer.concat([c.update(plaintext, 'utf8'), c.final()]);
  return `vault:v${version}:${b64(Buffer.concat([nonce, body, c.getAuthTag()]))}`;
}

describe('migrating transit keys from Vault', () => {
  it('an AES key imported with BYOK decrypts and rewraps ciphertexts Vault made with it', async () => {
    const material = randomBytes(32);
    const imported = await s.api('POST', 'transit/keys/from-vault/import', { type: 'aes256-gcm96', ciphertext: wrapForImport(material), hash_function: 'SHA256' });
    expect(imported.status).toBe(204);

    const fromVault = vaultCiphertext(material, 'made by vault');
    const dec = await s.api('POST', 'transit/decrypt/from-vault', { ciphertext: fromVault });
    expect(dec.status).toBe(200);
    expect(Buffer.from(dec.body.data.plaintext, 'base64').toString()).toBe('made by vault');

    const batch = await s.api('POST', 'transit/decrypt/from-vault', { batch_input: [{ ciphertext: vaultCiphertext(material, 'one') }, { ciphertext: vaultCiphertext(material, 'two') }] });
    expect(batch.body.data.batch_results.map((r: { plaintext: string }) => Buffer.from(r.plaintext, 'base64').toString())).toEqual(['one', 'two']);

    // Rewrap moves Vault's ciphertext to this engine's prefix; both decrypt to the same.
    const rewrapped = await s.api('POST', 'transit/rewrap/from-vault', { ciphertext: fromVault });
    expect(rewrapped.body.data.ciphertext).toMatch(/^service:v1:/);
    expect((await s.api('POST', 'transit/decrypt/from-vault', { ciphertext: rewrapped.body.data.ciphertext })).body.data.plaintext).toBe(b64('made by vault'));
    expect((await s.api('POST', 'transit/encrypt/from-vault', { plaintext: b64('new') })).body.data.ciphertext).toMatch(/^service:v1:/);

    // A tampered or foreign ciphertext is still refused.
    expect((await s.api('POST', 'transit/decrypt/from-vault', { ciphertext: vaultCiphertext(randomBytes(32), 'other key') })).status).toBe(400);
    expect((await s.api('POST', 'transit/decrypt/from-vault', { ciphertext: `other:v1:${fromVault.slice('vault:v1:'.length)}` })).status).toBe(400);
  });

  it('an ed25519 key imported with BYOK verifies signatures Vault made with it', async () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const der = privateKey.export({ type: 'pkcs8', format: 'der' });
    expect((await s.api('POST', 'transit/keys/signer/import', { type: 'ed25519', ciphertext: wrapForImport(der) })).status).toBe(204);
    const input = b64('signed in vault');
    const signature = `vault:v1:${b64(sign(null, Buffer.from('signed in vault'), privateKey))}`;
    const ok = await s.api('POST', 'transit/verify/signer', { input, signature });
    expect(ok.status).toBe(200);
    expect(ok.body.data.valid).toBe(true);
    expect((await s.api('POST', 'transit/verify/signer', { input: b64('something else'), signature })).body.data.valid).toBe(false);
    expect((await s.api('POST', 'transit/sign/signer', { input })).body.data.signature).toMatch(/^service:v1:/);
  });

  it('verifies HMACs carrying the vault: prefix', async () => {
    const input = b64('hmac me');
    const ours = (await s.api('POST', 'transit/hmac/from-vault', { input })).body.data.hmac as string;
    expect(ours).toMatch(/^service:v1:/);
    const asVault = `vault:v1:${ours.slice('service:v1:'.length)}`;
    expect((await s.api('POST', 'transit/verify/from-vault', { input, hmac: asVault })).body.data.valid).toBe(true);
    const wrong = `vault:v1:${b64(createHmac('sha256', randomBytes(32)).update('hmac me').digest())}`;
    expect((await s.api('POST', 'transit/verify/from-vault', { input, hmac: wrong })).body.data.valid).toBe(false);
  });
});
