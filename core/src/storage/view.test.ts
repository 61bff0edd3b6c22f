import { createInmemPhysical } from './inmem.js';
import { createClosableView } from './view.js';

describe('createClosableView (a mount storage closed by its disable)', () => {
  it('waits for the writes under way, then refuses every call, so nothing lands after close', async () => {
    const physical = createInmemPhysical();
    let release!: () => void;
    const slow = { ...physical, put: async (k: string, v: Uint8Array) => (await new Promise<void>((r) => (release = r)), physical.put(k, v)) };
    const view = createClosableView(slow, 'logical/m1/', () => new Error('gone'));
    const pending = view.put('a', Buffer.from('1'));
    let closed = false;
    const closing = view.close().then(() => (closed = true));
    await new Promise((r) => setImmediate(r));
    expect(closed).toBe(false);
    await expect(view.put('b', Buffer.from('2'))).rejects.toThrow('gone');
    await expect(view.get('a')).rejects.toThrow('gone');
    release();
    await pending;
    await closing;
    expect(await physical.list('logical/m1/')).toEqual(['a']);
  });
});
