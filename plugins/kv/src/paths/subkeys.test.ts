import { createTestBackend } from '@strongroom/sdk-plugin/testing';
import { createKvBackend } from '../backend.js';

const kv = () => createTestBackend(createKvBackend(), { mount: { type: 'kv', path: 'secret/', options: { version: '2' } } });

describe('kv v2 subkeys/', () => {
  it('returns the key structure without values', async () => {
    const b = await kv();
    await b.write('data/k', { data: { foo: 'abc', bar: { baz: 'def', q: { r: 1 } }, list: [1, 2] } });
    const r = await b.read('subkeys/k');
    expect(r?.data).toMatchObject({ subkeys: { foo: null, bar: { baz: null, q: { r: null } }, list: null }, metadata: { version: 1 } });
    expect((await b.read('subkeys/k', { depth: '1' }))?.data).toMatchObject({ subkeys: { foo: null, bar: null, list: null } });
    expect((await b.read('subkeys/k', { depth: 2 }))?.data).toMatchObject({ subkeys: { bar: { baz: null, q: null } } });
    expect(await b.read('subkeys/none')).toBeNull();
    await b.delete('data/k');
    expect((await b.read('subkeys/k'))?.status).toBe(404);
  });
});
