import { StrongroomError } from '@strongroom/sdk-plugin';
import { b64, transitTest } from './test-backend.js';

const bad = { status: 400 };

describe('encrypt / decrypt / rewrap / datakey paths', () => {
  it('upserts a key on create, refuses update on a missing key, and honours disable_upsert', async () => {
    const t = await transitTest();
    expect(await t.writeOperation('encrypt/k1', { plaintext: b64('x') })).toBe('create');
    await expect(t.request({ operation: 'update', path: 'encrypt/k1', data: { plaintext: b64('x') } })).rejects.toMatchObject({
      status: 400,
      message: 'encryption key not found',
    });
    const r = await t.write('encrypt/k1', { plaintext: b64('hello') });
    expect(r?.data?.ciphertext).toMatch(/^service:v1:/);
    expect(r?.data?.key_version).toBe(1);
    expect((await t.read('keys/k1'))?.data?.type).toBe('aes256-gcm96');
    expect(await t.writeOperation('encrypt/k1', { plaintext: b64('x') })).toBe('update');
    const d = await t.write('decrypt/k1', { ciphertext: r?.data?.ciphertext });
    expect(d?.data?.plaintext).toBe(b64('hello'));

    await t.write('config/keys', { disable_upsert: true });
    expect((await t.read('config/keys'))?.data).toEqual({ disable_upsert: true });
    await expect(t.request({ operation: 'create', path: 'encrypt/k2', data: { plaintext: b64('x') } })).rejects.toMatchObject(bad);
  });

  it('upsert with a context creates a derived key; with type and convergent_encryption as asked', async () => {
    const t = await transitTest();
    await t.write('encrypt/d', { plaintext: b64('a'), context: b64('c') });
    expect((await t.read('keys/d'))?.data?.derived).toBe(true);
    await t.write('encrypt/conv', { plaintext: b64('a'), context: b64('c'), type: 'xchacha20-poly1305', convergent_encryption: true });
    const k = (await t.read('keys/conv'))?.data;
    expect(k?.type).toBe('xchacha20-poly1305');
    expect(k?.convergent_encryption).toBe(true);
    const a = await t.write('encrypt/conv', { plaintext: b64('a'), context: b64('c') });
    const b = await t.write('encrypt/conv', { plaintext: b64('a'), context: b64('c') });
    expect(a?.data?.ciphertext).toBe(b?.data?.ciphertext);
  });

  it('answers 400, never 500, to bad base64, a wrong context, tampering and a too-old version', async () => {
    const t = await transitTest();
    await t.write('keys/k', { derived: true });
    await expect(t.write('encrypt/k', { plaintext: 'not base64!', context: b64('c') })).rejects.toMatchObject(bad);
    const ct = (await t.write('encrypt/k', { plaintext: b64('p'), context: b64('c') }))?.data?.ciphertext as string;
    await expect(t.write('decrypt/k', { ciphertext: ct, context: b64('other') })).rejects.toMatchObject(bad);
    await expect(t.write('decrypt/k', { ciphertext: ct.slice(0, -4) + 'AAA=', context: b64('c') })).rejects.toMatchObject(bad);
    await t.write('keys/k/rotate', {});
    await t.write('keys/k/config', { min_decryption_version: 2 });
    await expect(t.write('decrypt/k', { ciphertext: ct, context: b64('c') })).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('disallowed by policy'),
    });
  });

  it('batch: results in input order, references echoed, partial failure code, all-failed is 400', async () => {
    const t = await transitTest();
    await t.write('keys/k', {});
    const r = await t.write('encrypt/k', {
      batch_input: [
        { plaintext: b64('one'), reference: 'a' },
        { plaintext: '%%%', reference: 'b' },
        { plaintext: b64('three'), reference: 'c' },
      ],
      partial_failure_response_code: 207,
    });
    expect(r?.status).toBe(207);
    const results = r?.data?.batch_results as Record<string, unknown>[];
    expect(results.map((x) => x.reference)).toEqual(['a', 'b', 'c']);
    expect(results[1]?.error).toMatch(/base64/);
    expect(results[0]?.ciphertext).toMatch(/^service:v1:/);
    const dec = await t.write('decrypt/k', {
      batch_input: [{ ciphertext: results[2]?.ciphertext, reference: 'z' }, { ciphertext: results[0]?.ciphertext }],
    });
    expect(dec?.status).toBeUndefined();
    expect(dec?.data?.batch_results).toEqual([{ plaintext: b64('three'), reference: 'z' }, { plaintext: b64('one') }]);
    const allBad = await t.write('encrypt/k', { batch_input: [{ plaintext: '!' }, {}], partial_failure_response_code: 207 });
    expect(allBad?.status).toBe(400);
    const partialDefault = await t.write('decrypt/k', { batch_input: [{ ciphertext: 'x' }, { ciphertext: results[0]?.ciphertext }] });
    expect(partialDefault?.status).toBe(400);
  });

  it('rewrap moves a ciphertext to the latest version without returning plaintext', async () => {
    const t = await transitTest();
    await t.write('keys/k', {});
    const ct = (await t.write('encrypt/k', { plaintext: b64('secret') }))?.data?.ciphertext;
    await t.write('keys/k/rotate', {});
    const rw = await t.write('rewrap/k', { ciphertext: ct });
    expect(rw?.data?.ciphertext).toMatch(/^service:v2:/);
    expect(rw?.data?.plaintext).toBeUndefined();
    expect((await t.write('decrypt/k', { ciphertext: rw?.data?.ciphertext }))?.data?.plaintext).toBe(b64('secret'));
  });

  it('datakey plaintext and wrapped, bits 128/256/512', async () => {
    const t = await transitTest();
    await t.write('keys/k', {});
    for (const bits of [128, 256, 512]) {
      const r = await t.write('datakey/plaintext/k', { bits });
      const pt = Buffer.from(r?.data?.plaintext as string, 'base64');
      expect(pt.length).toBe(bits / 8);
      expect((await t.write('decrypt/k', { ciphertext: r?.data?.ciphertext }))?.data?.plaintext).toBe(r?.data?.plaintext);
    }
    const w = await t.write('datakey/wrapped/k', {});
    expect(w?.data?.plaintext).toBeUndefined();
    expect(w?.data?.ciphertext).toMatch(/^service:v1:/);
    await expect(t.write('datakey/plaintext/k', { bits: 64 })).rejects.toMatchObject(bad);
    await expect(t.write('datakey/other/k', {})).rejects.toBeInstanceOf(StrongroomError);
  });

  it('soft-delete blocks exactly the data operations, and restore unblocks them', async () => {
    const t = await transitTest();
    await t.write('keys/k', { exportable: true, allow_plaintext_backup: true });
    const ct = (await t.write('encrypt/k', { plaintext: b64('x') }))?.data?.ciphertext;
    await t.delete('keys/k/soft-delete');
    for (const [path, data] of [
      ['encrypt/k', { plaintext: b64('x') }],
      ['decrypt/k', { ciphertext: ct }],
      ['hmac/k', { input: b64('x') }],
      ['keys/k/rotate', {}],
    ] as const) {
      await expect(t.write(path, data)).rejects.toMatchObject(bad);
    }
    await expect(t.read('export/encryption-key/k')).rejects.toMatchObject(bad);
    // Still readable, listable, configurable and backup-able.
    expect((await t.read('keys/k'))?.data?.soft_deleted).toBe(true);
    expect((await t.list('keys'))?.data?.keys).toEqual(['k']);
    await t.write('keys/k/config', { deletion_allowed: true });
    expect((await t.read('backup/k'))?.data?.backup).toEqual(expect.any(String));
    await t.write('keys/k/soft-delete-restore', {});
    expect((await t.write('decrypt/k', { ciphertext: ct }))?.data?.plaintext).toBe(b64('x'));
  });
});
