import { StrongroomError } from '@strongroom/sdk-plugin';
import { createTestBackend } from '@strongroom/sdk-plugin/testing';
import { createKvBackend } from '../backend.js';
import { mergePatch } from './data.js';

let t = Date.parse('2024-01-01T00:00:00.120Z');
const kv = () => createTestBackend(createKvBackend({ now: () => new Date(t) }), { mount: { type: 'kv', path: 'secret/', options: { version: '2' } } });
const errOf = (p: Promise<unknown>) => p.then(() => { throw new Error('expected an error'); }, (e: StrongroomError) => e);

beforeEach(() => (t = Date.parse('2024-01-01T00:00:00.120Z')));

describe('kv v2 data/', () => {
  it('writes versions and reads them back in Vault\'s shape', async () => {
    const b = await kv();
    const w1 = await b.write('data/app/db', { data: { password: 'p1' } });
    expect(w1?.data).toEqual({ created_time: '2024-01-01T00:00:00.12Z', custom_metadata: null, deletion_time: '', destroyed: false, version: 1 });
    t += 1000;
    await b.write('data/app/db', { data: { password: 'p2' } });
    expect((await b.read('data/app/db'))?.data).toEqual({
      data: { password: 'p2' },
      metadata: { created_time: '2024-01-01T00:00:01.12Z', custom_metadata: null, deletion_time: '', destroyed: false, version: 2 },
    });
    expect((await b.read('data/app/db', { version: '1' }))?.data).toMatchObject({ data: { password: 'p1' }, metadata: { version: 1 } });
    expect(await b.read('data/app/db', { version: 7 })).toBeNull();
    expect(await b.read('data/missing')).toBeNull();
  });

  it('decides create vs update by existence of the key', async () => {
    const b = await kv();
    expect(await b.writeOperation('data/k')).toBe('create');
    await b.write('data/k', { data: { a: 1 } });
    expect(await b.writeOperation('data/k')).toBe('update');
  });

  it('enforces check-and-set with Vault\'s messages', async () => {
    const b = await kv();
    await b.write('data/k', { data: { a: 1 }, options: { cas: 0 } });
    expect((await errOf(b.write('data/k', { data: { a: 2 }, options: { cas: 0 } }))).message).toBe('check-and-set parameter did not match the current version');
    expect((await b.write('data/k', { data: { a: 2 }, options: { cas: 1 } }))?.data).toMatchObject({ version: 2 });
    await b.write('config', { cas_required: true });
    const e = await errOf(b.write('data/k', { data: { a: 3 } }));
    expect(e).toMatchObject({ status: 400, message: 'check-and-set parameter required for this call' });
    expect((await b.write('data/k', { data: { a: 3 }, options: { cas: '2' } }))?.data).toMatchObject({ version: 3 });
  });

  it('requires data', async () => {
    const b = await kv();
    expect((await errOf(b.write('data/k', {}))).message).toBe('no data provided');
    expect((await errOf(b.write('data/k', { data: 'nope' }))).message).toBe('field "data": invalid JSON object');
  });

  it('soft-deletes the latest version: 404 with metadata, data kept for undelete', async () => {
    const b = await kv();
    await b.write('data/k', { data: { a: 1 } });
    t += 5000;
    expect(await b.delete('data/k')).toBeNull();
    const r = await b.read('data/k');
    expect(r?.status).toBe(404);
    expect(r?.data).toEqual({ data: null, metadata: { created_time: '2024-01-01T00:00:00.12Z', custom_metadata: null, deletion_time: '2024-01-01T00:00:05.12Z', destroyed: false, version: 1 } });
    await b.write('undelete/k', { versions: [1] });
    expect((await b.read('data/k'))?.data).toMatchObject({ data: { a: 1 } });
  });

  it('patches the latest version with a JSON merge patch', async () => {
    const b = await kv();
    const missing = await errOf(b.patch('data/k', { data: { a: 1 } }));
    expect([missing.code, missing.message]).toEqual(['not_found', 'no existing data at k']);
    await b.write('data/k', { data: { a: 1, b: { c: 2, d: 3 } } });
    const p = await b.patch('data/k', { data: { a: null, b: { c: 9 }, e: 'x' }, options: { cas: 1 } });
    expect(p?.data).toMatchObject({ version: 2 });
    expect((await b.read('data/k'))?.data).toMatchObject({ data: { b: { c: 9, d: 3 }, e: 'x' } });
    expect((await errOf(b.patch('data/k', { data: { a: 1 }, options: { cas: 1 } }))).message).toBe('check-and-set parameter did not match the current version');
  });

  it('prunes versions beyond max_versions, oldest first', async () => {
    const b = await kv();
    await b.write('metadata/k', { max_versions: 2 });
    for (let i = 1; i <= 4; i++) await b.write('data/k', { data: { i } });
    const m = (await b.read('metadata/k'))?.data as { versions: Record<string, unknown>; oldest_version: number; current_version: number };
    expect(Object.keys(m.versions)).toEqual(['3', '4']);
    expect(m).toMatchObject({ oldest_version: 3, current_version: 4 });
    expect(await b.read('data/k', { version: 1 })).toBeNull();
    const stored = [...(b.storage as unknown as { dump(): Map<string, Uint8Array> }).dump().keys()].filter((k) => k.startsWith('versions/'));
    expect(stored).toHaveLength(2);
  });

  it('applies delete_version_after to new versions', async () => {
    const b = await kv();
    await b.write('config', { delete_version_after: '1h' });
    await b.write('data/k', { data: { a: 1 } });
    expect((await b.read('data/k'))?.data).toMatchObject({ metadata: { deletion_time: '2024-01-01T01:00:00.12Z' } });
    t += 3600_000;
    expect((await b.read('data/k'))?.status).toBe(404);
  });

  it('does not offer LIST on data/ (listing is on metadata/)', async () => {
    const b = await kv();
    expect(await errOf(b.list('data/'))).toMatchObject({ status: 405 });
  });

  it('never puts the secret or its path in plain text into a storage key', async () => {
    const b = await kv();
    await b.write('data/app/db', { data: { password: 'hunter2' } });
    const keys = [...(b.storage as unknown as { dump(): Map<string, Uint8Array> }).dump().keys()];
    expect(keys.some((k) => k.includes('hunter2'))).toBe(false);
    expect(keys.filter((k) => k.startsWith('versions/')).every((k) => /^versions\/[0-9a-f]{64}\/\d+$/.test(k))).toBe(true);
  });
});

describe('mergePatch', () => {
  it('follows RFC 7386', () => {
    expect(mergePatch({ a: 'b' }, { a: 'c' })).toEqual({ a: 'c' });
    expect(mergePatch({ a: 'b' }, { b: 'c' })).toEqual({ a: 'b', b: 'c' });
    expect(mergePatch({ a: 'b' }, { a: null })).toEqual({});
    expect(mergePatch({ a: ['b'] }, { a: 'c' })).toEqual({ a: 'c' });
    expect(mergePatch({ a: { b: 'c' } }, { a: { b: 'd', c: null } })).toEqual({ a: { b: 'd' } });
    expect(mergePatch(['a'], { a: 'b' })).toEqual({ a: 'b' });
  });
});
