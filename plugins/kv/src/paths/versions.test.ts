import { StrongroomError } from '@strongroom/sdk-plugin';
import { createTestBackend } from '@strongroom/sdk-plugin/testing';
import { createKvBackend } from '../backend.js';

let t = Date.parse('2024-01-01T00:00:00Z');
const kv = () => createTestBackend(createKvBackend({ now: () => new Date(t) }), { mount: { type: 'kv', path: 'secret/', options: { version: '2' } } });
const errOf = (p: Promise<unknown>) => p.then(() => { throw new Error('expected an error'); }, (e: StrongroomError) => e);

async function seeded() {
  const b = await kv();
  for (let i = 1; i <= 3; i++) await b.write('data/k', { data: { i } });
  return b;
}

describe('kv v2 delete/, undelete/, destroy/', () => {
  it('requires versions', async () => {
    const b = await seeded();
    for (const action of ['delete', 'undelete', 'destroy']) {
      expect((await errOf(b.write(`${action}/k`, {}))).message).toBe('no version number provided');
    }
  });

  it('soft-deletes and restores given versions ("1,2" or [1,2])', async () => {
    const b = await seeded();
    t += 1000;
    await b.write('delete/k', { versions: '1,2' });
    expect((await b.read('data/k', { version: 1 }))?.status).toBe(404);
    expect((await b.read('data/k', { version: 2 }))?.data).toMatchObject({ data: null, metadata: { deletion_time: '2024-01-01T00:00:01Z' } });
    expect((await b.read('data/k'))?.data).toMatchObject({ data: { i: 3 } });
    await b.write('undelete/k', { versions: [2] });
    expect((await b.read('data/k', { version: 2 }))?.data).toMatchObject({ data: { i: 2 }, metadata: { deletion_time: '' } });
    expect((await b.read('data/k', { version: 1 }))?.status).toBe(404);
  });

  it('destroys data permanently; undelete cannot bring it back', async () => {
    const b = await seeded();
    await b.write('destroy/k', { versions: [2] });
    const r = await b.read('data/k', { version: 2 });
    expect(r?.status).toBe(404);
    expect(r?.data).toMatchObject({ data: null, metadata: { destroyed: true } });
    await b.write('undelete/k', { versions: [2] });
    expect((await b.read('data/k', { version: 2 }))?.status).toBe(404);
    expect((await b.read('metadata/k'))?.data).toMatchObject({ versions: { '2': { destroyed: true } } });
  });

  it('ignores unknown versions and keys', async () => {
    const b = await seeded();
    expect(await b.write('delete/k', { versions: [9] })).toBeNull();
    expect(await b.write('destroy/nope', { versions: [1] })).toBeNull();
    expect((await b.read('data/k'))?.data).toMatchObject({ data: { i: 3 } });
  });
});
