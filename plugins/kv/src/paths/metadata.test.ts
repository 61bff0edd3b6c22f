import { StrongroomError } from '@strongroom/sdk-plugin';
import { createTestBackend } from '@strongroom/sdk-plugin/testing';
import { createKvBackend } from '../backend.js';

let t = Date.parse('2024-01-01T00:00:00Z');
const kv = () => createTestBackend(createKvBackend({ now: () => new Date(t) }), { mount: { type: 'kv', path: 'secret/', options: { version: '2' } } });
const errOf = (p: Promise<unknown>) => p.then(() => { throw new Error('expected an error'); }, (e: StrongroomError) => e);

describe('kv v2 metadata/', () => {
  it('reads the full metadata record', async () => {
    const b = await kv();
    await b.write('data/k', { data: { a: 1 } });
    t += 1000;
    await b.write('data/k', { data: { a: 2 } });
    expect((await b.read('metadata/k'))?.data).toEqual({
      cas_required: false,
      created_time: '2024-01-01T00:00:00Z',
      current_version: 2,
      custom_metadata: null,
      delete_version_after: '0s',
      max_versions: 0,
      oldest_version: 0,
      updated_time: '2024-01-01T00:00:01Z',
      versions: {
        '1': { created_time: '2024-01-01T00:00:00Z', deletion_time: '', destroyed: false },
        '2': { created_time: '2024-01-01T00:00:01Z', deletion_time: '', destroyed: false },
      },
    });
    expect(await b.read('metadata/nope')).toBeNull();
  });

  it('writes only the fields sent, creating metadata without versions', async () => {
    const b = await kv();
    expect(await b.writeOperation('metadata/k')).toBe('create');
    await b.write('metadata/k', { max_versions: '5', custom_metadata: { owner: 'ana' }, delete_version_after: '1h30m' });
    await b.write('metadata/k', { cas_required: 'true' });
    expect((await b.read('metadata/k'))?.data).toMatchObject({
      max_versions: 5,
      cas_required: true,
      delete_version_after: '1h30m0s',
      custom_metadata: { owner: 'ana' },
      current_version: 0,
      versions: {},
    });
    expect(await b.read('data/k')).toBeNull();
    // cas_required on the key applies to data writes.
    expect((await errOf(b.write('data/k', { data: { a: 1 } }))).message).toBe('check-and-set parameter required for this call');
    expect((await b.read('metadata/k'))?.data).toMatchObject({ current_version: 0 });
    await b.write('data/k', { data: { a: 1 }, options: { cas: 0 } });
    expect((await b.read('data/k'))?.data).toMatchObject({ metadata: { custom_metadata: { owner: 'ana' } } });
  });

  it('validates custom_metadata', async () => {
    const b = await kv();
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v']));
    expect((await errOf(b.write('metadata/k', { custom_metadata: many }))).message).toBe('field "custom_metadata": at most 64 keys');
    expect((await errOf(b.write('metadata/k', { custom_metadata: { a: 'x'.repeat(513) } }))).status).toBe(400);
    expect((await errOf(b.write('metadata/k', { custom_metadata: { a: 1 } }))).message).toMatch(/^field "custom_metadata"/);
  });

  it('patches custom_metadata as a merge patch', async () => {
    const b = await kv();
    expect(await b.patch('metadata/k', { max_versions: 1 })).toBeNull();
    await b.write('metadata/k', { custom_metadata: { a: '1', b: '2' } });
    await b.patch('metadata/k', { custom_metadata: { a: null, c: '3' }, max_versions: 3 });
    expect((await b.read('metadata/k'))?.data).toMatchObject({ custom_metadata: { b: '2', c: '3' }, max_versions: 3 });
  });

  it('deletes every version and the metadata', async () => {
    const b = await kv();
    await b.write('data/k', { data: { a: 1 } });
    await b.write('data/k', { data: { a: 2 } });
    await b.delete('metadata/k');
    expect(await b.read('metadata/k')).toBeNull();
    expect(await b.read('data/k')).toBeNull();
    expect([...(b.storage as unknown as { dump(): Map<string, Uint8Array> }).dump().keys()]).toEqual([]);
  });

  it('lists directories with pagination', async () => {
    const b = await kv();
    for (const k of ['a', 'b/x', 'b/y/z', 'c']) await b.write(`data/${k}`, { data: { v: 1 } });
    expect((await b.list('metadata/'))?.data).toEqual({ keys: ['a', 'b/', 'c'] });
    expect((await b.list('metadata/b'))?.data).toEqual({ keys: ['x', 'y/'] });
    expect((await b.list('metadata/', { after: 'a', limit: 1 }))?.data).toEqual({ keys: ['b/'] });
    expect(await b.list('metadata/none/')).toBeNull(); // empty: 404
  });
});
