/**
 * Transit end to end: the real binary and the transit plugin process. The
 * engine's logic is unit-tested in plugins/transit; this checks the wire:
 * fields and statuses as a client sees them, ACL decisions from the
 * existence check (upsert), multi-status batches, and that bad input is a
 * 400 with a message, never a 500. Known answers come from node:crypto.
 */
import {
  constants,
  createCipheriv,
  createDecipheriv,
  createHash,
  createPublicKey,
  publicEncrypt,
  randomBytes,
  verify as nodeVerify,
  type KeyObject,
} from 'node:crypto';
import { startDevServer, type RunningServer } from '../helpers/server';

jest.setTimeout(120_000);

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
const fromB64 = (s: unknown) => Buffer.from(String(s), 'base64');
/** The base64 part of `service:v<N>:<base64>`. */
const payload = (v: unknown) => {
  const m = /^service:v\d+:(.+)$/.exec(String(v));
  if (!m) throw new Error(`not a service ciphertext/signature: ${String(v)}`);
  return Buffer.from(m[1]!, 'base64');
};

let s: RunningServer;
beforeAll(async () => {
  s = await startDevServer();
  expect((await s.api('POST', 'sys/mounts/transit', { type: 'transit' })).status).toBe(204);
});
afterAll(async () => {
  await s.stop();
});

async function ok(method: string, path: string, body?: unknown, token?: string) {
  const r = await s.api(method, path, body, token === undefined ? {} : { token });
  if (r.status < 200 || r.status > 299) throw new Error(`${method} ${path} -> ${r.status} ${r.text}`);
  return r;
}

/** A 400 whose errors say something; a 500 would fail here with its body shown. */
async function expect400(method: string, path: string, body: unknown, says: RegExp) {
  const r = await s.api(method, path, body);
  expect({ path, status: r.status, body: r.body }).toMatchObject({ path, status: 400 });
  expect(r.body.errors.join(' ')).toMatch(says);
}

const SYMMETRIC = ['aes128-gcm96', 'aes256-gcm96', 'chacha20-poly1305', 'xchacha20-poly1305'];
const ASYMMETRIC = ['ed25519', 'ecdsa-p256', 'ecdsa-p384', 'ecdsa-p521', 'rsa-2048', 'rsa-3072', 'rsa-4096'];

function publicKeyOf(type: string, readKey: string): KeyObject {
  if (type === 'ed25519') return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: fromB64(readKey).toString('base64url') }, format: 'jwk' });
  return createPublicKey(readKey);
}

describe('transit through the plugin process', () => {
  it.each(SYMMETRIC)('%s: create, read fields, encrypt/decrypt with associated data where supported', async (type) => {
    const name = `sym-${type}`;
    expect((await s.api('POST', `transit/keys/${name}`, { type })).status).toBe(204);
    const key = (await ok('GET', `transit/keys/${name}`)).body.data;
    expect(key).toMatchObject({ name, type, latest_version: 1, supports_encryption: true, supports_decryption: true, supports_signing: false, deletion_allowed: false });
    expect(typeof key.keys['1']).toBe('number');

    const plaintext = b64(randomBytes(64));
    const enc = await ok('POST', `transit/encrypt/${name}`, { plaintext });
    expect(enc.body.data).toMatchObject({ key_version: 1, ciphertext: expect.stringMatching(/^service:v1:/) });
    expect(enc.body.data.plaintext).toBeUndefined();
    const dec = await ok('POST', `transit/decrypt/${name}`, { ciphertext: enc.body.data.ciphertext });
    expect(dec.body.data.plaintext).toBe(plaintext);

    const ad = b64('row-17');
    const withAd = await ok('POST', `transit/encrypt/${name}`, { plaintext, associated_data: ad });
    expect((await ok('POST', `transit/decrypt/${name}`, { ciphertext: withAd.body.data.ciphertext, associated_data: ad })).body.data.plaintext).toBe(plaintext);
    await expect400('POST', `transit/decrypt/${name}`, { ciphertext: withAd.body.data.ciphertext, associated_data: b64('row-18') }, /unable to decrypt/);
  });

  it.each(ASYMMETRIC)('%s: sign/verify on the wire, and node:crypto verifies with the public key from the key read', async (type) => {
    const name = `asym-${type}`;
    expect((await s.api('POST', `transit/keys/${name}`, { type })).status).toBe(204);
    const key = (await ok('GET', `transit/keys/${name}`)).body.data;
    expect(key).toMatchObject({ name, type, supports_signing: true });
    const pub = publicKeyOf(type, key.keys['1'].public_key);

    const input = Buffer.from(`document for ${type}`);
    const signed = await ok('POST', `transit/sign/${name}/sha2-256`, { input: b64(input) });
    const signature = signed.body.data.signature as string;
    expect(signed.body.data.key_version).toBe(1);
    expect((await ok('POST', `transit/verify/${name}/sha2-256`, { input: b64(input), signature })).body.data.valid).toBe(true);
    expect((await ok('POST', `transit/verify/${name}/sha2-256`, { input: b64('tampered'), signature })).body.data.valid).toBe(false);

    const raw = payload(signature);
    const verified =
      type === 'ed25519'
        ? nodeVerify(null, input, pub, raw)
        : type.startsWith('rsa')
          ? nodeVerify('sha256', input, { key: pub, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_AUTO }, raw)
          : nodeVerify('sha256', input, pub, raw);
    expect(verified).toBe(true);

    if (type.startsWith('rsa')) {
      // RSA keys also encrypt (OAEP-SHA256): node:crypto encrypts with the public key, the service decrypts.
      const plaintext = randomBytes(32);
      const outside = publicEncrypt({ key: pub, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, plaintext);
      expect((await ok('POST', `transit/decrypt/${name}`, { ciphertext: `service:v1:${outside.toString('base64')}` })).body.data.plaintext).toBe(b64(plaintext));
      const enc = await ok('POST', `transit/encrypt/${name}`, { plaintext: b64('round trip') });
      expect((await ok('POST', `transit/decrypt/${name}`, { ciphertext: enc.body.data.ciphertext })).body.data.plaintext).toBe(b64('round trip'));
    } else {
      await expect400('POST', `transit/encrypt/${name}`, { plaintext: b64('x') }, /does not support encryption/);
    }
  });

  it('hmac keys: hmac and verify on the wire, chosen algorithm, no encryption', async () => {
    expect((await s.api('POST', 'transit/keys/mac', { type: 'hmac', key_size: 64 })).status).toBe(204);
    expect((await ok('GET', 'transit/keys/mac')).body.data).toMatchObject({ type: 'hmac', key_size: 64 });
    const mac = (await ok('POST', 'transit/hmac/mac/sha2-512', { input: b64('message') })).body.data.hmac as string;
    expect(payload(mac)).toHaveLength(64);
    expect((await ok('POST', 'transit/verify/mac/sha2-512', { input: b64('message'), hmac: mac })).body.data.valid).toBe(true);
    expect((await ok('POST', 'transit/verify/mac/sha2-512', { input: b64('massage'), hmac: mac })).body.data.valid).toBe(false);
    await expect400('POST', 'transit/encrypt/mac', { plaintext: b64('x') }, /does not support encryption/);
  });

  it('hash: all eight algorithms match node:crypto, hex and base64', async () => {
    const input = Buffer.from('known answer over the wire');
    const algos: [string, string][] = [
      ['sha2-224', 'sha224'], ['sha2-256', 'sha256'], ['sha2-384', 'sha384'], ['sha2-512', 'sha512'],
      ['sha3-224', 'sha3-224'], ['sha3-256', 'sha3-256'], ['sha3-384', 'sha3-384'], ['sha3-512', 'sha3-512'],
    ];
    for (const [api, node] of algos) {
      expect((await ok('POST', `transit/hash/${api}`, { input: b64(input) })).body.data.sum).toBe(createHash(node).update(input).digest('hex'));
      expect((await ok('POST', 'transit/hash', { input: b64(input), algorithm: api, format: 'base64' })).body.data.sum).toBe(createHash(node).update(input).digest('base64'));
    }
  });

  it('batch with good and bad items: 207 with partial_failure_response_code, 400 without, every reference echoed', async () => {
    await ok('POST', 'transit/keys/batch', {});
    const batch_input = [
      { plaintext: b64('one'), reference: 'a' },
      { plaintext: 'not base64!', reference: 'b' },
      { plaintext: b64('three'), reference: 'c' },
    ];
    const partial = await s.api('POST', 'transit/encrypt/batch', { batch_input, partial_failure_response_code: 207 });
    expect(partial.status).toBe(207);
    const results = partial.body.data.batch_results as { ciphertext?: string; error?: string; reference: string }[];
    expect(results.map((r) => r.reference)).toEqual(['a', 'b', 'c']);
    expect(results[0]!.ciphertext).toMatch(/^service:v1:/);
    expect(results[1]!.ciphertext).toBeUndefined();
    expect(results[1]!.error).toMatch(/base64/);
    expect(results[2]!.ciphertext).toMatch(/^service:v1:/);

    const plain = await s.api('POST', 'transit/encrypt/batch', { batch_input });
    expect(plain.status).toBe(400);
    expect(plain.body.data.batch_results).toHaveLength(3);

    const dec = await ok('POST', 'transit/decrypt/batch', {
      batch_input: [{ ciphertext: results[2]!.ciphertext, reference: 'z' }, { ciphertext: results[0]!.ciphertext, reference: 'y' }],
    });
    expect(dec.status).toBe(200);
    expect(dec.body.data.batch_results).toEqual([{ plaintext: b64('three'), reference: 'z' }, { plaintext: b64('one'), reference: 'y' }]);

    const allBad = await s.api('POST', 'transit/decrypt/batch', { batch_input: [{ ciphertext: 'garbage' }, { ciphertext: 'service:v1:AAAA' }], partial_failure_response_code: 207 });
    expect(allBad.status).toBe(400);
  });

  it('rewrap moves to the latest version without plaintext; datakey plaintext and wrapped', async () => {
    await ok('POST', 'transit/keys/rw', {});
    const ct = (await ok('POST', 'transit/encrypt/rw', { plaintext: b64('keep me') })).body.data.ciphertext as string;
    expect((await s.api('POST', 'transit/keys/rw/rotate', {})).status).toBeLessThan(300);
    const rw = await ok('POST', 'transit/rewrap/rw', { ciphertext: ct });
    expect(rw.body.data).toMatchObject({ key_version: 2, ciphertext: expect.stringMatching(/^service:v2:/) });
    expect(rw.body.data.plaintext).toBeUndefined();
    expect((await ok('POST', 'transit/decrypt/rw', { ciphertext: rw.body.data.ciphertext })).body.data.plaintext).toBe(b64('keep me'));

    for (const bits of [128, 256, 512]) {
      const dk = await ok('POST', 'transit/datakey/plaintext/rw', { bits });
      expect(fromB64(dk.body.data.plaintext)).toHaveLength(bits / 8);
      expect((await ok('POST', 'transit/decrypt/rw', { ciphertext: dk.body.data.ciphertext })).body.data.plaintext).toBe(dk.body.data.plaintext);
    }
    const wrapped = await ok('POST', 'transit/datakey/wrapped/rw', {});
    expect(wrapped.body.data.plaintext).toBeUndefined();
    expect(wrapped.body.data.ciphertext).toMatch(/^service:v2:/);
    await expect400('POST', 'transit/datakey/plaintext/rw', { bits: 64 }, /bits/);
  });

  it('soft-delete blocks use on the wire; the key stays readable and restore unblocks it', async () => {
    await ok('POST', 'transit/keys/soft', {});
    const ct = (await ok('POST', 'transit/encrypt/soft', { plaintext: b64('x') })).body.data.ciphertext as string;
    expect((await s.api('DELETE', 'transit/keys/soft/soft-delete')).status).toBe(204);
    await expect400('POST', 'transit/encrypt/soft', { plaintext: b64('x') }, /soft-deleted/);
    await expect400('POST', 'transit/decrypt/soft', { ciphertext: ct }, /soft-deleted/);
    await expect400('POST', 'transit/rewrap/soft', { ciphertext: ct }, /soft-deleted/);
    await expect400('POST', 'transit/datakey/wrapped/soft', {}, /soft-deleted/);
    expect((await ok('GET', 'transit/keys/soft')).body.data.soft_deleted).toBe(true);
    expect((await s.api('POST', 'transit/keys/soft/soft-delete-restore', {})).status).toBeLessThan(300);
    expect((await ok('POST', 'transit/decrypt/soft', { ciphertext: ct })).body.data.plaintext).toBe(b64('x'));
  });

  it('BYOK: a key wrapped with node:crypto imports, decrypts what node:crypto encrypted, and the reverse', async () => {
    const wrapping = (await ok('GET', 'transit/wrapping_key')).body.data.public_key as string;
    expect(createPublicKey(wrapping).asymmetricKeyDetails?.modulusLength).toBe(4096);
    const material = randomBytes(32);
    const ephemeral = randomBytes(32);
    const head = publicEncrypt({ key: createPublicKey(wrapping), padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, ephemeral);
    const kw = createCipheriv('id-aes256-wrap-pad', ephemeral, Buffer.from('a65959a6', 'hex'));
    const ciphertext = Buffer.concat([head, kw.update(material), kw.final()]).toString('base64');
    expect((await s.api('POST', 'transit/keys/byok/import', { type: 'aes256-gcm96', ciphertext, hash_function: 'SHA256' })).status).toBe(204);
    expect((await ok('GET', 'transit/keys/byok')).body.data).toMatchObject({ imported: true, type: 'aes256-gcm96' });

    const nonce = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', material, nonce);
    const outside = Buffer.concat([nonce, c.update('sealed outside'), c.final(), c.getAuthTag()]);
    expect(fromB64((await ok('POST', 'transit/decrypt/byok', { ciphertext: `service:v1:${outside.toString('base64')}` })).body.data.plaintext).toString()).toBe('sealed outside');

    const inside = payload((await ok('POST', 'transit/encrypt/byok', { plaintext: b64('sealed inside') })).body.data.ciphertext);
    const d = createDecipheriv('aes-256-gcm', material, inside.subarray(0, 12));
    d.setAuthTag(inside.subarray(inside.length - 16));
    expect(Buffer.concat([d.update(inside.subarray(12, inside.length - 16)), d.final()]).toString()).toBe('sealed inside');

    await expect400('POST', 'transit/keys/byok2/import', { type: 'aes256-gcm96', ciphertext: 'AAAA' }, /invalid ciphertext/);
  });

  it('upsert: encrypt to a missing key needs create, an existing key only update (real tokens, real policies)', async () => {
    await ok('PUT', 'sys/policies/acl/enc-update', { policy: 'path "transit/encrypt/*" { capabilities = ["update"] }' });
    await ok('PUT', 'sys/policies/acl/enc-create', { policy: 'path "transit/encrypt/*" { capabilities = ["create", "update"] }' });
    const updater = (await ok('POST', 'auth/token/create', { policies: ['enc-update'] })).body.auth.client_token as string;
    const creator = (await ok('POST', 'auth/token/create', { policies: ['enc-create'] })).body.auth.client_token as string;
    await ok('POST', 'transit/keys/existing', {});

    expect((await s.api('POST', 'transit/encrypt/existing', { plaintext: b64('a') }, { token: updater })).status).toBe(200);
    const denied = await s.api('POST', 'transit/encrypt/upserted', { plaintext: b64('a') }, { token: updater });
    expect(denied.status).toBe(403);
    expect((await s.api('GET', 'transit/keys/upserted')).status).toBe(404);

    const created = await s.api('POST', 'transit/encrypt/upserted', { plaintext: b64('a') }, { token: creator });
    expect(created.status).toBe(200);
    expect((await ok('GET', 'transit/keys/upserted')).body.data.type).toBe('aes256-gcm96');
    // Now that it exists, update is enough.
    expect((await s.api('POST', 'transit/encrypt/upserted', { plaintext: b64('b') }, { token: updater })).status).toBe(200);
  });

  it('bad input is a 400 naming the problem, never a 500', async () => {
    await ok('POST', 'transit/keys/errs', { derived: true });
    const ct = (await ok('POST', 'transit/encrypt/errs', { plaintext: b64('p'), context: b64('ctx') })).body.data.ciphertext as string;
    await expect400('POST', 'transit/encrypt/errs', { plaintext: 'not base64!', context: b64('ctx') }, /base64/i);
    await expect400('POST', 'transit/encrypt/errs', { plaintext: b64('p') }, /context/i);
    await expect400('POST', 'transit/decrypt/errs', { ciphertext: ct, context: b64('other') }, /unable to decrypt/);
    await expect400('POST', 'transit/decrypt/errs', { ciphertext: `${ct.slice(0, -6)}AAAAA=`, context: b64('ctx') }, /unable to decrypt/);
    await expect400('POST', 'transit/decrypt/errs', { ciphertext: 'garbage', context: b64('ctx') }, /invalid ciphertext/);
    await expect400('POST', 'transit/decrypt/errs', { context: b64('ctx') }, /ciphertext/);
    await expect400('POST', 'transit/decrypt/missing-key', { ciphertext: ct }, /not found/);
    await expect400('POST', 'transit/hash/md5', { input: b64('x') }, /algorithm/);
    await expect400('POST', 'transit/hash', { input: '***' }, /input/);
    await expect400('POST', 'transit/keys/badtype', { type: 'aes512-gcm' }, /type/);
    await expect400('POST', 'transit/sign/errs', { input: b64('x') }, /does not support signing/);
    await expect400('POST', 'transit/keys/errs/config', { min_decryption_version: 'soon' }, /min_decryption_version/);

    // Below the minimum decryption version.
    await ok('POST', 'transit/keys/old', {});
    const v1 = (await ok('POST', 'transit/encrypt/old', { plaintext: b64('p') })).body.data.ciphertext as string;
    await s.api('POST', 'transit/keys/old/rotate', {});
    await ok('POST', 'transit/keys/old/config', { min_decryption_version: 2 });
    await expect400('POST', 'transit/decrypt/old', { ciphertext: v1 }, /disallowed by policy/);
  });
});
