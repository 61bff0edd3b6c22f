import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createInmemPhysical } from '../storage/inmem.js';
import { createLevelPhysical } from '../storage/level.js';
import type { Physical } from '../storage/physical.js';
import { BarrierIntegrityError, BarrierSealedError, KEYRING_PATH, ROOT_KEY_PATH, createBarrier } from './barrier.js';

const text = (v: Uint8Array | null) => (v === null ? null : Buffer.from(v).toString('utf8'));

async function setup(physical: Physical = createInmemPhysical()) {
  const barrier = createBarrier(physical);
  const key = randomBytes(32);
  await barrier.initialize(key);
  await barrier.unseal(key);
  return { physical, barrier, key };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

describe('barrier', () => {
  it('refresh() picks up a keyring rotated by another node on the same storage and drops cached entries', async () => {
    const { physical, barrier: active, key } = await setup();
    const standby = createBarrier(physical);
    await standby.unseal(key);
    await active.put('k', Buffer.from('v1'));
    expect(text(await standby.get('k'))).toBe('v1');
    await active.rotate();
    await active.put('k', Buffer.from('v2'));
    await active.put('new', Buffer.from('under term 2'));
    // The standby still holds its cached copy, and cannot open term 2 yet.
    expect(text(await standby.get('k'))).toBe('v1');
    await expect(standby.get('new')).rejects.toBeInstanceOf(BarrierIntegrityError);
    await standby.refresh();
    expect(text(await standby.get('k'))).toBe('v2');
    expect(text(await standby.get('new'))).toBe('under term 2');
    expect(standby.keyStatus().term).toBe(2);
    standby.seal();
    await expect(standby.refresh()).rejects.toBeInstanceOf(BarrierSealedError);
  });

  it('stores values encrypted with the documented envelope', async () => {
    const { physical, barrier } = await setup();
    await barrier.put('sys/token/x', Buffer.from('plain-value'));
    const raw = Buffer.from((await physical.get('sys/token/x')) as Uint8Array);
    expect(raw.readUInt32BE(0)).toBe(1);
    expect(raw[4]).toBe(1);
    expect(raw.length).toBe(5 + 12 + 'plain-value'.length + 16);
    expect(raw.includes(Buffer.from('plain-value'))).toBe(false);
    expect(text(await barrier.get('sys/token/x'))).toBe('plain-value');
  });

  it('uses a fresh nonce per write', async () => {
    const { physical, barrier } = await setup();
    await barrier.put('a', Buffer.from('same'));
    const first = Buffer.from((await physical.get('a')) as Uint8Array);
    await barrier.put('a', Buffer.from('same'));
    const second = Buffer.from((await physical.get('a')) as Uint8Array);
    expect(first.subarray(5, 17).equals(second.subarray(5, 17))).toBe(false);
  });

  it.each([
    ['term', 3],
    ['version', 4],
    ['nonce', 10],
    ['ciphertext', 20],
    ['tag', -1],
  ])('refuses an entry with a tampered %s byte', async (_part, at) => {
    const { physical, barrier } = await setup();
    await barrier.put('k', Buffer.from('some secret value'));
    const raw = Buffer.from((await physical.get('k')) as Uint8Array);
    const i = at < 0 ? raw.length + at : at;
    raw[i] = (raw[i] as number) ^ 0x01;
    await physical.put('k', raw);
    await expect(barrier.get('k')).rejects.toBeInstanceOf(BarrierIntegrityError);
  });

  it('refuses an entry moved or copied to another key', async () => {
    const { physical, barrier } = await setup();
    await barrier.put('logical/a/secret', Buffer.from('for a only'));
    await physical.put('logical/b/secret', (await physical.get('logical/a/secret')) as Uint8Array);
    await expect(barrier.get('logical/b/secret')).rejects.toBeInstanceOf(BarrierIntegrityError);
    await expect(barrier.get('logical/b/secret')).rejects.toThrow(/integrity/);
  });

  it('refuses truncated entries', async () => {
    const { physical, barrier } = await setup();
    await physical.put('short', Buffer.from([0, 0, 0, 1, 1, 2, 3]));
    await expect(barrier.get('short')).rejects.toBeInstanceOf(BarrierIntegrityError);
  });

  it('rotates: new writes use the new term, old entries stay readable, across seal and unseal', async () => {
    const { physical, barrier, key } = await setup();
    await barrier.put('old', Buffer.from('v1'));
    expect(barrier.keyStatus().term).toBe(1);
    expect(await barrier.rotate()).toEqual({ term: 2 });
    expect(await barrier.rotate()).toEqual({ term: 3 });
    await barrier.put('new', Buffer.from('v3'));
    expect(Buffer.from((await physical.get('new')) as Uint8Array).readUInt32BE(0)).toBe(3);
    expect(barrier.keyStatus()).toMatchObject({ term: 3, encryptions: 1 });
    barrier.seal();
    await barrier.unseal(key);
    expect(barrier.keyStatus().term).toBe(3);
    expect(text(await barrier.get('old'))).toBe('v1');
    expect(text(await barrier.get('new'))).toBe('v3');
  });

  it('throws a typed sealed error for every operation while sealed', async () => {
    const { barrier } = await setup();
    await barrier.put('k', Buffer.from('v'));
    await barrier.get('k');
    barrier.seal();
    expect(barrier.sealed).toBe(true);
    await expect(barrier.get('k')).rejects.toBeInstanceOf(BarrierSealedError);
    await expect(barrier.put('k', Buffer.from('x'))).rejects.toBeInstanceOf(BarrierSealedError);
    await expect(barrier.delete('k')).rejects.toBeInstanceOf(BarrierSealedError);
    await expect(barrier.list('')).rejects.toBeInstanceOf(BarrierSealedError);
    await expect(barrier.batch([])).rejects.toBeInstanceOf(BarrierSealedError);
    await expect(barrier.rotate()).rejects.toBeInstanceOf(BarrierSealedError);
    await expect((async () => { for await (const _ of barrier.scan('')) void _; })()).rejects.toBeInstanceOf(BarrierSealedError);
    expect(() => barrier.keyStatus()).toThrow(BarrierSealedError);
    expect(new BarrierSealedError().status).toBe(503);
  });

  it('refuses a wrong unseal key and keeps no state', async () => {
    const physical = createInmemPhysical();
    const barrier = createBarrier(physical);
    const key = randomBytes(32);
    await expect(barrier.unseal(key)).rejects.toThrow(/not initialized/);
    expect(await barrier.initialized()).toBe(false);
    await barrier.initialize(key);
    expect(await barrier.initialized()).toBe(true);
    expect(barrier.sealed).toBe(true);
    await expect(barrier.unseal(randomBytes(32))).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/invalid key/) });
    expect(barrier.sealed).toBe(true);
    await expect(barrier.unseal(randomBytes(16))).rejects.toThrow(/32 bytes/);
    await barrier.unseal(key);
    expect(barrier.sealed).toBe(false);
  });

  it('refuses to initialize twice', async () => {
    const { barrier } = await setup();
    await expect(barrier.initialize(randomBytes(32))).rejects.toThrow(/already initialized/);
  });

  it('writes extra ops atomically with initialization', async () => {
    const physical = createInmemPhysical();
    const barrier = createBarrier(physical);
    await barrier.initialize(randomBytes(32), { extraOps: [{ type: 'put', key: 'core/seal-config', value: Buffer.from('{}') }] });
    expect(text(await physical.get('core/seal-config'))).toBe('{}');
  });

  it('keeps its own keys out of the secure store', async () => {
    const { physical, barrier } = await setup();
    await expect(barrier.put(KEYRING_PATH, Buffer.from('x'))).rejects.toThrow(/reserved/);
    await expect(barrier.delete(ROOT_KEY_PATH)).rejects.toThrow(/reserved/);
    await expect(barrier.batch([{ type: 'delete', key: KEYRING_PATH }])).rejects.toThrow(/reserved/);
    await barrier.put('core/mounts', Buffer.from('m'));
    const scanned: string[] = [];
    for await (const e of barrier.scan('core/')) scanned.push(`${e.key}=${text(e.value)}`);
    expect(scanned).toEqual(['core/mounts=m']);
    expect(await physical.get(KEYRING_PATH)).not.toBeNull();
  });

  it('does not re-fill the cache with a value read before a concurrent write', async () => {
    const inner = createInmemPhysical();
    let hold: (() => void) | null = null;
    const gated: Physical = {
      ...inner,
      async get(key) {
        const v = await inner.get(key);
        if (hold === null && key === 'hot') await new Promise<void>((r) => (hold = r));
        return v;
      },
    };
    const { barrier } = await setup(gated);
    await barrier.put('hot', Buffer.from('old'));
    const slowRead = barrier.get('hot'); // fetches 'old' and waits
    await new Promise((r) => setImmediate(r));
    await barrier.put('hot', Buffer.from('new'));
    (hold as unknown as () => void)();
    expect(text(await slowRead)).toBe('old');
    expect(text(await barrier.get('hot'))).toBe('new');
  });


  it('hands a reader its own copy: a write that wipes the cached value before the reader resumes does not reach it', async () => {
    const { barrier } = await setup();
    await barrier.put('hot', Buffer.from('{"v":1}'));
    await barrier.get('hot'); // cached now
    const hit = barrier.get('hot'); // answered from the cache, resumes on a later tick
    const miss = (async () => {
      await barrier.put('cold', Buffer.from('{"v":2}'));
      return barrier.get('cold'); // a fill whose value is cached and handed out
    })();
    // Writes of both keys drop (and wipe) the cached copies while the readers are still waiting.
    const writes = Promise.all([barrier.put('hot', Buffer.from('{"v":3}')), (async () => {
      await new Promise((r) => setImmediate(r));
      await barrier.put('cold', Buffer.from('{"v":4}'));
    })()]);
    expect(text(await hit)).toBe('{"v":1}');
    expect(['{"v":2}', '{"v":4}']).toContain(text(await miss));
    await writes;
    expect(text(await barrier.get('hot'))).toBe('{"v":3}');
  });
  it('serves hot reads from the cache and drops them on seal', async () => {
    const inner = createInmemPhysical();
    let reads = 0;
    const counting: Physical = { ...inner, get: (k) => (reads++, inner.get(k)) };
    const { barrier, key } = await setup(counting);
    await barrier.put('sys/policy/p', Buffer.from('policy'));
    reads = 0;
    for (let i = 0; i < 5; i++) expect(text(await barrier.get('sys/policy/p'))).toBe('policy');
    expect(reads).toBe(1);
    barrier.seal();
    await barrier.unseal(key);
    reads = 0;
    expect(text(await barrier.get('sys/policy/p'))).toBe('policy');
    expect(reads).toBe(1);
  });

  it('leaves no plaintext marker and no unseal key in the level files', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strongroom-marker-'));
    const control = mkdtempSync(join(tmpdir(), 'strongroom-control-'));
    try {
      const marker = Buffer.from(`MARKER-${randomBytes(16).toString('hex')}`);
      const physical = await createLevelPhysical({ path: dir });
      const { barrier, key } = await setup(physical);
      await barrier.put('logical/m/secret', marker);
      await barrier.batch([{ type: 'put', key: 'logical/m/other', value: marker }]);
      await barrier.rotate();
      await barrier.put('logical/m/third', marker);
      barrier.seal();
      await physical.close();

      // The grep works: the same marker written without the barrier is found.
      const plain = await createLevelPhysical({ path: control });
      await plain.put('x', marker);
      await plain.close();
      expect(filesUnder(control).some((f) => readFileSync(f).includes(marker))).toBe(true);

      const files = filesUnder(dir);
      expect(files.length).toBeGreaterThan(0);
      for (const f of files) {
        const bytes = readFileSync(f);
        expect(bytes.includes(marker)).toBe(false);
        expect(bytes.includes(key)).toBe(false);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(control, { recursive: true, force: true });
    }
  });
});
