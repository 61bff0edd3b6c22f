import { StrongroomError } from '@strongroom/sdk-plugin';
import { createTestBackend } from '@strongroom/sdk-plugin/testing';
import { createKvBackend } from '../backend.js';

const kv = () => createTestBackend(createKvBackend(), { mount: { type: 'kv', path: 'secret/', options: { version: '2' } } });
const errOf = (p: Promise<unknown>) => p.then(() => { throw new Error('expected an error'); }, (e: StrongroomError) => e);

describe('kv v2 config', () => {
  it('reads defaults and changes only the fields sent', async () => {
    const b = await kv();
    expect((await b.read('config'))?.data).toEqual({ cas_required: false, delete_version_after: '0s', max_versions: 0 });
    await b.write('config', { max_versions: '3' });
    await b.write('config', { delete_version_after: '90s' });
    expect((await b.read('config'))?.data).toEqual({ cas_required: false, delete_version_after: '1m30s', max_versions: 3 });
  });

  it('applies the mount max_versions when the key sets none', async () => {
    const b = await kv();
    await b.write('config', { max_versions: 2 });
    for (let i = 0; i < 3; i++) await b.write('data/k', { data: { i } });
    expect(Object.keys(((await b.read('metadata/k'))?.data as { versions: object }).versions)).toEqual(['2', '3']);
  });

  it('survives a restart and is re-read after invalidation', async () => {
    const b = await kv();
    await b.write('config', { cas_required: true });
    const again = await createTestBackend(createKvBackend(), { storage: b.storage, mount: { options: { version: '2' } } });
    expect((await again.read('config'))?.data).toMatchObject({ cas_required: true });
    await b.write('config', { cas_required: false });
    expect((await again.read('config'))?.data).toMatchObject({ cas_required: true });
    await again.backend.invalidateKey('config');
    expect((await again.read('config'))?.data).toMatchObject({ cas_required: false });
  });

  it('names the field on bad input', async () => {
    const b = await kv();
    expect((await errOf(b.write('config', { max_versions: 'many' }))).message).toBe('field "max_versions": invalid integer');
    expect((await errOf(b.write('config', { delete_version_after: 'later' }))).message).toBe('field "delete_version_after": invalid duration');
  });
});
