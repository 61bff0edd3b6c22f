import { createHash, createHmac, createPublicKey, verify as nodeVerify, constants } from 'node:crypto';
import { b64, transitTest } from './test-backend.js';

jest.setTimeout(60000);
const bad = { status: 400 };

describe('hash, random, hmac, sign and verify paths', () => {
  const algos: [string, string][] = [
    ['sha2-224', 'sha224'], ['sha2-256', 'sha256'], ['sha2-384', 'sha384'], ['sha2-512', 'sha512'],
    ['sha3-224', 'sha3-224'], ['sha3-256', 'sha3-256'], ['sha3-384', 'sha3-384'], ['sha3-512', 'sha3-512'],
  ];

  it.each(algos)('hash %s matches node:crypto in hex and base64, body or URL', async (api, node) => {
    const t = await transitTest();
    const input = Buffer.from('known answer');
    expect((await t.write(`hash/${api}`, { input: b64(input) }))?.data?.sum).toBe(createHash(node).update(input).digest('hex'));
    expect((await t.write('hash', { input: b64(input), algorithm: api, format: 'base64' }))?.data?.sum).toBe(createHash(node).update(input).digest('base64'));
  });

  it('hash defaults to sha2-256 hex and rejects bad input', async () => {
    const t = await transitTest();
    expect((await t.write('hash', { input: b64('a') }))?.data?.sum).toBe(createHash('sha256').update('a').digest('hex'));
    await expect(t.write('hash/md5', { input: b64('a') })).rejects.toMatchObject(bad);
    await expect(t.write('hash', { input: '***' })).rejects.toMatchObject({ status: 400, message: expect.stringContaining('input') });
  });

  it('random: body or path bytes, hex or base64, source', async () => {
    const t = await transitTest();
    expect(Buffer.from((await t.write('random', {}))?.data?.random_bytes as string, 'base64')).toHaveLength(32);
    expect((await t.write('random/16', { format: 'hex' }))?.data?.random_bytes).toMatch(/^[0-9a-f]{32}$/);
    expect(Buffer.from((await t.write('random/all/8', {}))?.data?.random_bytes as string, 'base64')).toHaveLength(8);
    expect(Buffer.from((await t.write('random', { bytes: 48 }))?.data?.random_bytes as string, 'base64')).toHaveLength(48);
    await expect(t.write('random/bogus', {})).rejects.toMatchObject(bad);
  });

  it('hmac with latest or chosen version and algorithm, verified via verify/:name with hmac', async () => {
    const t = await transitTest();
    await t.write('keys/h', { type: 'hmac', key_size: 48, exportable: true });
    const key = Buffer.from(((await t.read('export/hmac-key/h'))?.data?.keys as Record<string, string>)['1']!, 'base64');
    expect(key).toHaveLength(48);
    const mac = (await t.write('hmac/h/sha3-256', { input: b64('msg') }))?.data?.hmac;
    expect(mac).toBe('service:v1:' + createHmac('sha3-256', key).update('msg').digest('base64'));
    expect((await t.write('verify/h', { input: b64('msg'), hmac: mac, algorithm: 'sha3-256' }))?.data?.valid).toBe(true);
    expect((await t.write('verify/h', { input: b64('msh'), hmac: mac, algorithm: 'sha3-256' }))?.data?.valid).toBe(false);
    await t.write('keys/a', {});
    await t.write('keys/a/rotate', {});
    expect((await t.write('hmac/a', { input: b64('m'), key_version: 1 }))?.data?.hmac).toMatch(/^service:v1:/);
    expect((await t.write('hmac/a', { input: b64('m') }))?.data?.hmac).toMatch(/^service:v2:/);
    const batch = await t.write('hmac/a', { batch_input: [{ input: b64('1'), reference: 'r' }, { input: '!' }] });
    expect((batch?.data?.batch_results as unknown[])[0]).toMatchObject({ reference: 'r', hmac: expect.stringMatching(/^service:v2:/) });
    expect(batch?.status).toBe(400);
  });

  it.each(['ed25519', 'ecdsa-p256', 'ecdsa-p384', 'ecdsa-p521', 'rsa-2048'])('sign/verify %s; signature checks with the public key in node:crypto', async (type) => {
    const t = await transitTest();
    await t.write('keys/s', { type });
    const s = await t.write('sign/s/sha2-512', { input: b64('doc') });
    const sig = s?.data?.signature as string;
    expect(sig).toMatch(/^service:v1:/);
    expect((await t.write('verify/s/sha2-512', { input: b64('doc'), signature: sig }))?.data?.valid).toBe(true);
    expect((await t.write('verify/s/sha2-512', { input: b64('dog'), signature: sig }))?.data?.valid).toBe(false);
    const pem = (await t.read('export/public-key/s/1', { format: 'pem' }))?.data?.keys as Record<string, string>;
    const pub = createPublicKey(pem['1']!);
    const raw = Buffer.from(sig.split(':')[2]!, 'base64');
    const ok =
      type === 'ed25519'
        ? nodeVerify(null, Buffer.from('doc'), pub, raw)
        : type.startsWith('rsa')
          ? nodeVerify('sha512', Buffer.from('doc'), { key: pub, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_AUTO }, raw)
          : nodeVerify('sha512', Buffer.from('doc'), pub, raw);
    expect(ok).toBe(true);
  });

  it('sign batch and verify batch with references', async () => {
    const t = await transitTest();
    await t.write('keys/s', { type: 'ecdsa-p256' });
    const r = await t.write('sign/s', { batch_input: [{ input: b64('a'), reference: '1' }, { input: b64('b'), reference: '2' }], marshaling_algorithm: 'jws' });
    const res = r?.data?.batch_results as { signature: string; reference: string }[];
    const v = await t.write('verify/s', {
      marshaling_algorithm: 'jws',
      batch_input: [
        { input: b64('a'), signature: res[0]!.signature, reference: 'x' },
        { input: b64('a'), signature: res[1]!.signature, reference: 'y' },
      ],
    });
    expect(v?.data?.batch_results).toEqual([{ valid: true, reference: 'x' }, { valid: false, reference: 'y' }]);
  });

  it('derived ed25519 signing with context is deterministic', async () => {
    const t = await transitTest();
    await t.write('keys/e', { type: 'ed25519', derived: true });
    const a = await t.write('sign/e', { input: b64('m'), context: b64('c') });
    const b = await t.write('sign/e', { input: b64('m'), context: b64('c') });
    expect(a?.data?.signature).toBe(b?.data?.signature);
    await expect(t.write('sign/e', { input: b64('m') })).rejects.toMatchObject(bad);
  });
});
