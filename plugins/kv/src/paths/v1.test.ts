import { StrongroomError } from '@strongroom/sdk-plugin';
import { createTestBackend } from '@strongroom/sdk-plugin/testing';
import { createKvBackend } from '../backend.js';

const kv = () => createTestBackend(createKvBackend(), { mount: { type: 'kv', path: 'kv/', options: {} } });
const errOf = (p: Promise<unknown>) => p.then(() => { throw new Error('expected an error'); }, (e: StrongroomError) => e);

describe('kv v1', () => {
  it('writes, reads, replaces and deletes the body as the secret, without warnings', async () => {
    const b = await kv();
    expect(await b.writeOperation('app/db')).toBe('create');
    expect(await b.write('app/db', { user: 'u', password: 'p' })).toBeNull();
    expect(await b.writeOperation('app/db')).toBe('update');
    expect((await b.read('app/db'))?.data).toEqual({ user: 'u', password: 'p' });
    await b.write('app/db', { password: 'q' });
    expect((await b.read('app/db'))?.data).toEqual({ password: 'q' });
    await b.delete('app/db');
    expect(await b.read('app/db')).toBeNull();
  });

  it('lists directories only, paginated', async () => {
    const b = await kv();
    for (const k of ['a', 'dir/b', 'dir/c/d']) await b.write(k, { v: 1 });
    expect((await b.list(''))?.data).toEqual({ keys: ['a', 'dir/'] });
    expect((await b.list('dir'))?.data).toEqual({ keys: ['b', 'c/'] });
    expect((await b.list('dir/', { limit: 1 }))?.data).toEqual({ keys: ['b'] });
  });

  it('refuses empty writes', async () => {
    const b = await kv();
    expect((await errOf(b.write('k', {}))).message).toBe('missing data fields');
  });

  it('has no v2 sub-paths', async () => {
    const b = await kv();
    await b.write('data/x', { data: { a: 1 } });
    expect((await b.read('data/x'))?.data).toEqual({ data: { a: 1 } });
  });
});
