import type { Storage } from '@strongroom/sdk-plugin';
import { createFaultyStore, createMemoryStorage, createTestBackend, helpFor, toOpenApi } from '@strongroom/sdk-plugin/testing';
import { createKvBackend, kvBackend } from './index.js';

describe('kv backend', () => {
  it('defaults to version 1 and refuses unknown versions', async () => {
    const v1 = await createTestBackend(kvBackend, { mount: { options: {} } });
    expect(v1.backend.describe().paths.map((p) => p.pattern)).toEqual(['*path']);
    await expect(createTestBackend(kvBackend, { mount: { options: { version: '3' } } })).rejects.toThrow('kv version must be 1 or 2');
  });

  it('generates a stable OpenAPI document (snapshot: review API drift here)', async () => {
    const v2 = await createTestBackend(createKvBackend(), { mount: { path: 'secret/', options: { version: '2' } } });
    const v1 = await createTestBackend(createKvBackend(), { mount: { path: 'kv/', options: {} } });
    const doc = toOpenApi(
      [
        { prefix: 'secret/', description: v2.backend.describe() },
        { prefix: 'kv/', description: v1.backend.describe() },
      ],
      { title: 'kv', version: '1' },
    );
    expect(doc).toMatchSnapshot();
  });

  it('answers help for a secret path', async () => {
    const v2 = await createTestBackend(createKvBackend(), { mount: { path: 'secret/', options: { version: '2' } } });
    const h = helpFor(v2.backend.describe(), 'data/app/db');
    expect(h.help).toContain('Matching Route: data/*path');
    expect(Object.keys(h.openapi.paths)).toEqual(['/']);
    expect(h.openapi.paths['/']).toHaveProperty('patch');
  });
});

describe('kv v2 read cache', () => {
  /** Storage that counts reads, and lets the test change a value behind the engine's back. */
  function countingStorage() {
    const inner = createMemoryStorage();
    const reads: string[] = [];
    const storage: Storage = { ...inner, get: async (k) => (reads.push(k), inner.get(k)) };
    return { inner, storage, reads };
  }
  const setup = async () => {
    const c = countingStorage();
    const tb = await createTestBackend(createKvBackend(), { mount: { path: 'secret/', options: { version: '2' } }, storage: c.storage });
    return { ...c, tb };
  };

  it('serves a hot read without storage reads, and never a stale one after a write, patch, delete or destroy', async () => {
    const { tb, reads } = await setup();
    await tb.write('data/app', { data: { v: 1 } });
    expect((await tb.read('data/app'))?.data?.data).toEqual({ v: 1 });
    reads.length = 0;
    expect((await tb.read('data/app'))?.data?.data).toEqual({ v: 1 });
    expect(reads).toEqual([]);

    await tb.write('data/app', { data: { v: 2 } });
    expect((await tb.read('data/app'))?.data?.data).toEqual({ v: 2 });
    await tb.request({ operation: 'patch', path: 'data/app', data: { data: { w: 3 } } });
    expect((await tb.read('data/app'))?.data?.data).toEqual({ v: 2, w: 3 });
    await tb.delete('data/app');
    expect((await tb.read('data/app'))?.data?.data).toBeNull();
    await tb.write('undelete/app', { versions: [3] });
    expect((await tb.read('data/app'))?.data?.data).toEqual({ v: 2, w: 3 });
    await tb.write('destroy/app', { versions: [3] });
    expect((await tb.read('data/app'))?.data?.data).toBeNull();
    await tb.delete('metadata/app');
    expect(await tb.read('data/app')).toBeNull();
  });

  it('a caller editing what it read does not change the cached copy', async () => {
    const { tb } = await setup();
    await tb.write('data/app', { data: { v: 1 } });
    const first = (await tb.read('data/app'))!.data!.data as Record<string, unknown>;
    first.v = 'changed';
    expect((await tb.read('data/app'))?.data?.data).toEqual({ v: 1 });
  });

  it('drops a key the core invalidates (storage changed outside this process)', async () => {
    const { tb, inner } = await setup();
    await tb.write('data/app', { data: { v: 1 } });
    await tb.read('data/app');
    const versionKey = (await inner.list('versions/')).map((d) => `versions/${d}1`)[0]!;
    await inner.put(versionKey, Buffer.from(JSON.stringify({ data: { v: 'elsewhere' } })));
    expect((await tb.read('data/app'))?.data?.data).toEqual({ v: 1 });
    await tb.backend.invalidateKey(versionKey);
    expect((await tb.read('data/app'))?.data?.data).toEqual({ v: 'elsewhere' });
  });
});

describe('kv v2 writes are atomic', () => {
  it('a version write cut short at the storage (fault injector) leaves neither the version nor its metadata', async () => {
    const storage = createFaultyStore(createMemoryStorage());
    const tb = await createTestBackend(createKvBackend(), { mount: { path: 'secret/', options: { version: '2' } }, storage });
    await tb.write('metadata/app', { max_versions: 2 });
    await tb.write('data/app', { data: { v: 1 } });
    await tb.write('data/app', { data: { v: 2 } });
    const before = [...storage.dump().keys()].sort();

    // The third version pushes version 1 out: version data, the removal and the metadata are one batch.
    storage.faults.failNext(1, 'batch');
    await expect(tb.write('data/app', { data: { v: 3 } })).rejects.toThrow('injected storage fault');
    expect([...storage.dump().keys()].sort()).toEqual(before);
    const read = await tb.read('data/app');
    expect(read?.data?.data).toEqual({ v: 2 });
    expect((read?.data?.metadata as { version: number }).version).toBe(2);
    expect((await tb.read('data/app', { version: 1 }))?.data?.data).toEqual({ v: 1 });

    await tb.write('data/app', { data: { v: 3 } });
    expect((await tb.read('metadata/app'))?.data).toMatchObject({ current_version: 3, oldest_version: 2 });
    expect(await tb.read('data/app', { version: 1 })).toBeNull();

    // Destroy: the data removal and the metadata change go together as well.
    storage.faults.failNext(1, 'batch');
    await expect(tb.write('destroy/app', { versions: [3] })).rejects.toThrow('injected storage fault');
    expect((await tb.read('data/app'))?.data?.data).toEqual({ v: 3 });
  });
});
