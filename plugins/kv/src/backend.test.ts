import { createTestBackend, type Storage } from '@strongroom/sdk-plugin';
import { createMemoryStorage, toOpenApi, helpFor } from '@strongroom/sdk-plugin/host';
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
