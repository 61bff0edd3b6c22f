import { createDecipheriv } from 'node:crypto';
import { createMemoryStorage, createTestBackend } from '@strongroom/sdk-plugin/testing';
import { createTransitFactory } from '../backend.js';
import { KEY_TYPES } from '../keys/key-types.js';
import { b64, transitTest } from './test-backend.js';

jest.setTimeout(120000);
const bad = { status: 400 };

describe('key management paths', () => {
  it('creates every key type with the spec read fields', async () => {
    const t = await transitTest();
    for (const type of KEY_TYPES) {
      await t.write(`keys/${type}`, { type, ...(type === 'hmac' ? { key_size: 64 } : {}) });
      const d = (await t.read(`keys/${type}`))?.data as Record<string, unknown>;
      expect(d).toMatchObject({ name: type, type, derived: false, exportable: false, allow_plaintext_backup: false, deletion_allowed: false, imported: false, latest_version: 1 });
      expect(Object.keys(d.keys as object)).toEqual(['1']);
      const v1 = (d.keys as Record<string, unknown>)['1'];
      if (type.startsWith('aes') || type.includes('chacha') || type === 'hmac') {
        expect(v1).toBe(Math.floor(t.clock.now / 1000));
      } else {
        expect((v1 as Record<string, string>).public_key).toBeTruthy();
      }
      expect(d).toHaveProperty('supports_encryption');
      expect(d).toHaveProperty('supports_signing');
      expect(JSON.stringify(d)).not.toMatch(/private/i);
    }
    expect((await t.read('keys/hmac'))?.data?.key_size).toBe(64);
    expect((await t.read('keys/ed25519'))?.data).toMatchObject({ supports_signing: true, supports_encryption: false, supports_derivation: true });
    expect((await t.read('keys/rsa-2048'))?.data).toMatchObject({ supports_signing: true, supports_encryption: true, supports_derivation: false });
    expect((await t.list('keys'))?.data?.keys).toHaveLength(KEY_TYPES.length);
    expect((await t.list('keys', { after: 'hmac', limit: 2 }))?.data?.keys).toEqual(['rsa-2048', 'rsa-3072']);
  });

  it('validates creation: key_size, auto_rotate_period, convergent without derived, unknown type', async () => {
    const t = await transitTest();
    await expect(t.write('keys/a', { type: 'hmac', key_size: 16 })).rejects.toMatchObject(bad);
    await expect(t.write('keys/a', { type: 'hmac', key_size: 513 })).rejects.toMatchObject(bad);
    await expect(t.write('keys/a', { auto_rotate_period: '30m' })).rejects.toMatchObject(bad);
    await expect(t.write('keys/a', { convergent_encryption: true })).rejects.toMatchObject(bad);
    await expect(t.write('keys/a', { type: 'des' })).rejects.toMatchObject({ status: 400, message: expect.stringContaining('type') });
    await t.write('keys/a', { auto_rotate_period: '1h' });
    expect((await t.read('keys/a'))?.data?.auto_rotate_period).toBe(3600);
  });

  it('deletes only with deletion_allowed', async () => {
    const t = await transitTest();
    await t.write('keys/k', {});
    await expect(t.delete('keys/k')).rejects.toMatchObject(bad);
    await t.write('keys/k/config', { deletion_allowed: true });
    await t.delete('keys/k');
    expect(await t.read('keys/k')).toBeNull();
  });

  it('exportable and allow_plaintext_backup can be set but never unset', async () => {
    const t = await transitTest();
    await t.write('keys/k', {});
    await t.write('keys/k/config', { exportable: true, allow_plaintext_backup: true });
    await expect(t.write('keys/k/config', { exportable: false })).rejects.toMatchObject(bad);
    await expect(t.write('keys/k/config', { allow_plaintext_backup: false })).rejects.toMatchObject(bad);
    expect((await t.read('keys/k'))?.data).toMatchObject({ exportable: true, allow_plaintext_backup: true });
  });

  it('rotates symmetric keys, keeps min versions coherent, and trims', async () => {
    const t = await transitTest();
    await t.write('keys/k', { type: 'aes128-gcm96', exportable: true });
    const ct1 = (await t.write('encrypt/k', { plaintext: b64('v1') }))?.data?.ciphertext;
    await t.write('keys/k/rotate', {});
    await t.write('keys/k/rotate', {});
    const exported = (await t.read('export/encryption-key/k'))?.data?.keys as Record<string, string>;
    expect(Object.values(exported).map((k) => Buffer.from(k, 'base64').length)).toEqual([16, 16, 16]);
    await expect(t.write('keys/k/config', { min_decryption_version: 4 })).rejects.toMatchObject(bad);
    await expect(t.write('keys/k/config', { min_decryption_version: 2, min_encryption_version: 1 })).rejects.toMatchObject(bad);
    await t.write('keys/k/config', { min_decryption_version: 2, min_encryption_version: 3 });
    await expect(t.write('keys/k/trim', { min_available_version: 3 })).rejects.toMatchObject(bad);
    await t.write('keys/k/trim', { min_available_version: 2 });
    const d = (await t.read('keys/k'))?.data;
    expect(Object.keys(d?.keys as object)).toEqual(['2', '3']);
    expect(d?.min_available_version).toBe(2);
    await expect(t.write('decrypt/k', { ciphertext: ct1 })).rejects.toMatchObject(bad);
  });

  it('refuses to rotate types that do not encrypt and decrypt (spec)', async () => {
    const t = await transitTest();
    await t.write('keys/e', { type: 'ed25519' });
    await expect(t.write('keys/e/rotate', {})).rejects.toMatchObject(bad);
    await t.write('keys/r', { type: 'rsa-2048' });
    await t.write('keys/r/rotate', {});
    expect((await t.read('keys/r'))?.data?.latest_version).toBe(2);
  });

  it('auto-rotates on periodic() once the period elapsed', async () => {
    const t = await transitTest();
    await t.write('keys/k', { auto_rotate_period: '2h' });
    await t.write('keys/off', {});
    await t.backend.periodic();
    expect((await t.read('keys/k'))?.data?.latest_version).toBe(1);
    t.clock.now += 2 * 3600 * 1000;
    await t.backend.periodic();
    expect((await t.read('keys/k'))?.data?.latest_version).toBe(2);
    expect((await t.read('keys/off'))?.data?.latest_version).toBe(1);
    await t.backend.periodic();
    expect((await t.read('keys/k'))?.data?.latest_version).toBe(2);
  });

  it('serves cached keys without storage reads, and drops them on invalidate', async () => {
    const storage = createMemoryStorage();
    let gets = 0;
    const counting = { ...storage, get: async (k: string) => (gets++, storage.get(k)) };
    const t = await createTestBackend(createTransitFactory(), { storage: counting });
    await t.write('keys/k', {});
    const ct = (await t.write('encrypt/k', { plaintext: b64('x') }))?.data?.ciphertext as string;
    gets = 0;
    for (let i = 0; i < 5; i++) await t.request({ operation: 'update', path: 'encrypt/k', data: { plaintext: b64('x') } });
    await t.request({ operation: 'update', path: 'decrypt/k', data: { ciphertext: ct } });
    expect(gets).toBe(0);

    // Another node deletes the key behind this process's back: stale until invalidated.
    await storage.delete('policy/k');
    await t.request({ operation: 'update', path: 'encrypt/k', data: { plaintext: b64('x') } });
    await t.backend.invalidateKey('policy/k');
    await expect(t.request({ operation: 'update', path: 'encrypt/k', data: { plaintext: b64('x') } })).rejects.toMatchObject(bad);
  });

  it('stores no key material under a storage key name, and one record per key', async () => {
    const storage = createMemoryStorage();
    const t = await createTestBackend(createTransitFactory(), { storage });
    await t.write('keys/k', {});
    await t.write('keys/other-name', {});
    expect([...storage.dump().keys()].sort()).toEqual(['policy/k', 'policy/other-name']);
  });

  it('uses a key stored in the format earlier versions wrote (JSON at policy/<name>)', async () => {
    const storage = createMemoryStorage();
    const material = Buffer.alloc(32, 9);
    const record = {
      name: 'old', type: 'aes256-gcm96', derived: false, kdf: 'hkdf_sha256', convergent_encryption: false, convergent_version: 0,
      exportable: false, allow_plaintext_backup: false, deletion_allowed: false, key_size: 32, auto_rotate_period: 0,
      min_decryption_version: 1, min_encryption_version: 0, min_available_version: 1, latest_version: 1,
      versions: { '1': { key: material.toString('base64'), hmac_key: Buffer.alloc(32, 1).toString('base64'), creation_time: 1_700_000_000_000 } },
      imported: false, allow_rotation: true, rotated_after_import: false, soft_deleted: false,
    };
    await storage.put('policy/old', Buffer.from(JSON.stringify(record), 'utf8'));
    const t = await createTestBackend(createTransitFactory(), { storage });
    const ct = String((await t.write('encrypt/old', { plaintext: b64('hello') }))?.data?.ciphertext);
    // Sealed with the stored material: AES-256-GCM, nonce || ciphertext || tag.
    const raw = Buffer.from(ct.split(':')[2]!, 'base64');
    const d = createDecipheriv('aes-256-gcm', material, raw.subarray(0, 12));
    d.setAuthTag(raw.subarray(raw.length - 16));
    expect(Buffer.concat([d.update(raw.subarray(12, raw.length - 16)), d.final()]).toString()).toBe('hello');
    await t.write('keys/old/rotate', {});
    const stored = JSON.parse(Buffer.from((await storage.get('policy/old'))!).toString('utf8'));
    expect(stored).toEqual({ ...record, latest_version: 2, versions: { ...record.versions, '2': expect.any(Object) } });
  });

  it('cache-config bounds the key cache (least recently used first); 0 leaves it unbounded', async () => {
    const storage = createMemoryStorage();
    const reads: string[] = [];
    const t = await createTestBackend(createTransitFactory(), { storage: { ...storage, get: async (k: string) => (reads.push(k), storage.get(k)) } });
    const names = Array.from({ length: 12 }, (_, i) => `k${i}`);
    for (const n of names) await t.write(`keys/${n}`, {});
    const touchAll = async () => {
      for (const n of names) await t.request({ operation: 'update', path: `encrypt/${n}`, data: { plaintext: b64('x') } });
    };
    await touchAll();
    reads.length = 0;
    await touchAll();
    expect(reads).toEqual([]);
    await t.write('cache-config', { size: 10 });
    await touchAll();
    reads.length = 0;
    await touchAll();
    expect(reads.filter((k) => k.startsWith('policy/')).length).toBeGreaterThan(0);
  });

  it('cache-config validates size', async () => {
    const t = await transitTest();
    await expect(t.write('cache-config', { size: 5 })).rejects.toMatchObject(bad);
    await t.write('cache-config', { size: 20 });
    expect((await t.read('cache-config'))?.data?.size).toBe(20);
  });
});
