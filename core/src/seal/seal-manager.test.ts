import { createInmemPhysical } from '../storage/inmem.js';
import { createBarrier } from '../barrier/barrier.js';
import type { Physical } from '../storage/physical.js';
import { randomBytes } from 'node:crypto';
import { createSealManager, parseSealConfig } from './seal-manager.js';
import { loadStaticSeal, type StaticSeal } from './static-seal.js';

function setup(physical: Physical = createInmemPhysical(), staticSeal?: StaticSeal) {
  const barrier = createBarrier(physical);
  const seal = createSealManager({ physical, barrier, storageType: 'inmem', version: '0.1.0', buildDate: '2025-01-01T00:00:00Z', ...(staticSeal ? { staticSeal } : {}) });
  return { physical, barrier, seal };
}

/** A static seal whose key comes from a fresh environment variable. */
function staticSeal(key: Buffer, opts: { id?: string; disabled?: boolean } = {}): StaticSeal {
  const name = `SR_SEAL_TEST_${randomBytes(4).toString('hex')}`;
  process.env[name] = key.toString('hex');
  try {
    return loadStaticSeal({ currentKeyId: opts.id ?? 'k', currentKey: `env://${name}`, disabled: opts.disabled ?? false });
  } finally {
    delete process.env[name];
  }
}

describe('seal manager', () => {
  it('reads JSON null as "not set" in the init and rekey parameters (hvac sends null for what it was not given)', () => {
    expect(parseSealConfig({ secret_shares: 5, secret_threshold: 3, pgp_keys: null, root_token_pgp_key: null, stored_shares: null })).toMatchObject({ secret_shares: 5, secret_threshold: 3 });
    expect(() => parseSealConfig({ secret_shares: null, secret_threshold: 3 })).toThrow(/secret_shares is required/);
  });

  it('reports Vault seal-status fields before init', async () => {
    const { seal } = setup();
    expect(await seal.status()).toEqual({
      type: 'shamir',
      initialized: false,
      sealed: true,
      t: 0,
      n: 0,
      progress: 0,
      nonce: '',
      version: '0.1.0',
      build_date: '2025-01-01T00:00:00Z',
      migration: false,
      recovery_seal: false,
      storage_type: 'inmem',
    });
  });

  it.each([
    [{ secret_shares: 3, secret_threshold: 4 }, /secret_threshold must be less than or equal to secret_shares/],
    [{ secret_shares: 0, secret_threshold: 0 }, /secret_shares must be at least 1/],
    [{ secret_shares: 256, secret_threshold: 2 }, /secret_shares must be at most 255/],
    [{ secret_shares: 3, secret_threshold: 1 }, /secret_threshold must be greater than 1/],
    [{ secret_shares: 3 }, /secret_threshold is required/],
    [{ secret_shares: 'x', secret_threshold: 2 }, /secret_shares must be an integer/],
    [{ secret_shares: 2.5, secret_threshold: 2 }, /secret_shares must be an integer/],
    [{ secret_shares: 3, secret_threshold: 2, pgp_keys: ['abc'] }, /pgp_keys/],
  ])('rejects init %j with a 400 naming the field', async (body, message) => {
    const { seal } = setup();
    await expect(seal.init(body)).rejects.toMatchObject({ status: 400, message: expect.stringMatching(message) });
    expect((await seal.status()).initialized).toBe(false);
  });

  it('initializes, stays sealed, and unseals with any threshold of shares', async () => {
    const { physical, seal } = setup();
    const { keys, keys_base64 } = await seal.init({ secret_shares: 5, secret_threshold: 3 });
    expect(keys).toHaveLength(5);
    expect(keys_base64).toHaveLength(5);
    expect(Buffer.from(keys_base64[0] as string, 'base64').toString('hex')).toBe(keys[0]);
    expect(JSON.parse(Buffer.from((await physical.get('core/seal-config')) as Uint8Array).toString())).toEqual({
      type: 'shamir',
      secret_shares: 5,
      secret_threshold: 3,
    });
    expect(await seal.status()).toMatchObject({ initialized: true, sealed: true, t: 3, n: 5, progress: 0, nonce: '' });
    await expect(seal.init({ secret_shares: 1, secret_threshold: 1 })).rejects.toThrow(/already initialized/);

    const s1 = await seal.submitUnsealKey(keys[4]);
    expect(s1).toMatchObject({ sealed: true, progress: 1 });
    expect(s1.nonce).toMatch(/^[0-9a-f-]{36}$/);
    // A duplicate part is ignored.
    expect(await seal.submitUnsealKey(keys[4])).toMatchObject({ progress: 1, nonce: s1.nonce });
    // Base64 parts work too, and the nonce is stable through one attempt.
    expect(await seal.submitUnsealKey(keys_base64[1])).toMatchObject({ progress: 2, nonce: s1.nonce });
    const done = await seal.submitUnsealKey(keys[2]);
    expect(done).toMatchObject({ sealed: false, progress: 0, nonce: '' });
    expect(done.cluster_name).toMatch(/^strongroom-cluster-[0-9a-f]{8}$/);
    expect(done.cluster_id).toMatch(/^[0-9a-f-]{36}$/);

    await seal.seal();
    const sealed = await seal.status();
    expect(sealed.sealed).toBe(true);
    expect(sealed.cluster_id).toBeUndefined();
    for (const k of [keys[0], keys[3], keys[1]]) await seal.submitUnsealKey(k);
    expect(await seal.status()).toMatchObject({ sealed: false, cluster_id: done.cluster_id });
  });

  it('resets progress and the nonce on request', async () => {
    const { seal } = setup();
    const { keys } = await seal.init({ secret_shares: 3, secret_threshold: 2 });
    const first = await seal.submitUnsealKey(keys[0]);
    expect(first.progress).toBe(1);
    expect(await seal.submitUnsealKey(undefined, { reset: true })).toMatchObject({ progress: 0, nonce: '', sealed: true });
    const again = await seal.submitUnsealKey(keys[1]);
    expect(again.progress).toBe(1);
    expect(again.nonce).not.toBe(first.nonce);
  });

  it('refuses shares from another initialization, resets progress, and stays sealed', async () => {
    const { seal } = setup();
    const { keys } = await seal.init({ secret_shares: 3, secret_threshold: 2 });
    const { seal: other } = setup();
    const { keys: foreign } = await other.init({ secret_shares: 3, secret_threshold: 2 });
    await seal.submitUnsealKey(keys[0]);
    await expect(seal.submitUnsealKey(foreign[1])).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/invalid key/) });
    expect(await seal.status()).toMatchObject({ sealed: true, progress: 0, nonce: '' });
    await seal.submitUnsealKey(keys[0]);
    expect((await seal.submitUnsealKey(keys[2])).sealed).toBe(false);
  });

  it('validates submitted keys', async () => {
    const { seal } = setup();
    await expect(seal.submitUnsealKey('abcd')).rejects.toThrow(/not initialized/);
    await seal.init({ secret_shares: 3, secret_threshold: 2 });
    await expect(seal.submitUnsealKey(undefined)).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/'key' must be specified/) });
    await expect(seal.submitUnsealKey('not hex or base64!')).rejects.toThrow(/'key' must be a valid hex or base64/);
    await expect(seal.submitUnsealKey('abcd')).rejects.toThrow(/'key' must be 33 bytes/);
    await expect(seal.submitUnsealKey('ab'.repeat(33), { migrate: true })).rejects.toThrow(/migrate/);
    expect((await seal.status()).progress).toBe(0);
  });

  it('runs hooks: onInit while briefly unsealed, onUnseal after unseal, onSeal before the keys go', async () => {
    const { barrier, seal } = setup();
    const events: string[] = [];
    seal.onInit(async () => {
      events.push(`init sealed=${barrier.sealed}`);
      await barrier.put('sys/token/root', Buffer.from('r'));
    });
    seal.onUnseal(() => void events.push(`unseal sealed=${barrier.sealed}`));
    const off = seal.onSeal(async () => {
      events.push(`seal read=${(await barrier.get('sys/token/root'))?.length}`);
    });
    seal.onSeal(() => {
      throw new Error('a broken hook');
    });
    const { keys } = await seal.init({ secret_shares: 1, secret_threshold: 1 });
    expect(keys[0]).toHaveLength(64);
    expect(barrier.sealed).toBe(true);
    await seal.submitUnsealKey(keys[0]);
    await seal.seal();
    expect(barrier.sealed).toBe(true);
    off();
    await seal.submitUnsealKey(keys[0]);
    await seal.seal();
    expect(events).toEqual(['init sealed=false', 'unseal sealed=false', 'seal read=1', 'unseal sealed=false']);
  });

  it('seals again when an unseal hook fails', async () => {
    const { barrier, seal } = setup();
    const { keys } = await seal.init({ secret_shares: 2, secret_threshold: 2 });
    seal.onUnseal(() => {
      throw new Error('mount table unreadable');
    });
    await seal.submitUnsealKey(keys[0]);
    await expect(seal.submitUnsealKey(keys[1])).rejects.toThrow(/mount table/);
    expect(barrier.sealed).toBe(true);
  });

  it('initDev leaves the server unsealed with one key that unseals after a restart', async () => {
    const physical = createInmemPhysical();
    const { seal, barrier } = setup(physical);
    let unsealed = 0;
    seal.onUnseal(() => void unsealed++);
    const { keys } = await seal.initDev();
    expect(keys).toHaveLength(1);
    expect(unsealed).toBe(1);
    expect(await seal.status()).toMatchObject({ initialized: true, sealed: false, t: 1, n: 1 });
    await barrier.put('secret/x', Buffer.from('kept'));

    const restarted = setup(physical);
    expect(await restarted.seal.status()).toMatchObject({ initialized: true, sealed: true, t: 1, n: 1 });
    expect((await restarted.seal.submitUnsealKey(keys[0])).sealed).toBe(false);
    expect(Buffer.from((await restarted.barrier.get('secret/x')) as Uint8Array).toString()).toBe('kept');
  });

  it('serializes concurrent parts so the threshold is crossed once', async () => {
    const { seal } = setup();
    const { keys } = await seal.init({ secret_shares: 5, secret_threshold: 2 });
    let unseals = 0;
    seal.onUnseal(() => void unseals++);
    const results = await Promise.all(keys.map((k) => seal.submitUnsealKey(k)));
    expect(results.filter((r) => !r.sealed).length).toBe(4);
    expect(unseals).toBe(1);
  });

  describe('static seal', () => {
    it('init answers recovery keys and unseals; a restart auto-unseals; after a seal the recovery keys unseal', async () => {
      const physical = createInmemPhysical();
      const key = randomBytes(32);
      const { seal, barrier } = setup(physical, staticSeal(key));
      await expect(seal.init({ secret_shares: 1, secret_threshold: 1 })).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/recovery_shares is required/) });
      const init = await seal.init({ recovery_shares: 3, recovery_threshold: 2 });
      expect(init.keys).toEqual([]);
      expect(init.recovery_keys).toHaveLength(3);
      expect(await seal.status()).toMatchObject({ type: 'static', sealed: false, t: 2, n: 3, recovery_seal: true, migration: false });
      await barrier.put('secret/x', Buffer.from('kept'));

      const restarted = setup(physical, staticSeal(key));
      expect((await restarted.seal.autoUnseal()).sealed).toBe(false);
      expect(Buffer.from((await restarted.barrier.get('secret/x')) as Uint8Array).toString()).toBe('kept');
      await restarted.seal.seal();
      expect((await restarted.seal.submitUnsealKey(init.recovery_keys![0])).sealed).toBe(true);
      expect((await restarted.seal.submitUnsealKey(init.recovery_keys![2])).sealed).toBe(false);
      expect(await restarted.seal.rootKeys.verifyParts(init.recovery_keys!.slice(0, 2).map((k) => Buffer.from(k, 'hex')))).toBe(true);
      expect(await restarted.seal.sealConfig()).toBeNull();

      const wrong = setup(physical, staticSeal(randomBytes(32)));
      await expect(wrong.seal.autoUnseal()).rejects.toThrow(/^seal "static": current_key \(key id "k"\) does not unwrap the stored key: wrong key$/);
      const missing = setup(physical);
      await expect(missing.seal.autoUnseal()).rejects.toThrow(/no seal "static" stanza/);
    });

    it('migrates Shamir -> static with the unseal keys and back with the recovery keys', async () => {
      const physical = createInmemPhysical();
      const key = randomBytes(32);
      const shamir = setup(physical);
      const { keys } = await shamir.seal.init({ secret_shares: 3, secret_threshold: 2 });

      const toStatic = setup(physical, staticSeal(key));
      expect(await toStatic.seal.autoUnseal()).toMatchObject({ sealed: true, migration: true, type: 'shamir', t: 2, n: 3 });
      await expect(toStatic.seal.submitUnsealKey(keys[0])).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/migrate/) });
      await toStatic.seal.submitUnsealKey(keys[0], { migrate: true });
      expect(await toStatic.seal.submitUnsealKey(keys[1], { migrate: true })).toMatchObject({ sealed: false, type: 'static', recovery_seal: true, migration: false });
      await toStatic.barrier.put('secret/x', Buffer.from('kept'));
      expect((await setup(physical, staticSeal(key)).seal.autoUnseal()).sealed).toBe(false);

      const toShamir = setup(physical, staticSeal(key, { disabled: true }));
      expect(await toShamir.seal.autoUnseal()).toMatchObject({ sealed: true, migration: true, type: 'static' });
      await toShamir.seal.submitUnsealKey(keys[2], { migrate: true });
      expect(await toShamir.seal.submitUnsealKey(keys[0], { migrate: true })).toMatchObject({ sealed: false, type: 'shamir', recovery_seal: false });
      for (const p of ['core/seal/stored-key', 'core/seal/recovery-key', 'core/recovery-config']) expect(await physical.get(p)).toBeNull();

      const back = setup(physical);
      await back.seal.submitUnsealKey(keys[1]);
      expect((await back.seal.submitUnsealKey(keys[2])).sealed).toBe(false);
      expect(Buffer.from((await back.barrier.get('secret/x')) as Uint8Array).toString()).toBe('kept');
    });
  });
});
