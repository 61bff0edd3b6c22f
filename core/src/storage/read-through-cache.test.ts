import { createReadThroughCache } from './read-through-cache.js';

describe('read-through cache', () => {
  it('serves a filled value without reading again', async () => {
    const c = createReadThroughCache<string>();
    const read = jest.fn(async () => 'v1');
    expect(await c.load('k', read)).toBe('v1');
    expect(await c.load('k', read)).toBe('v1');
    expect(read).toHaveBeenCalledTimes(1);
  });

  it('never keeps a value read before a change that landed while the read was in flight', async () => {
    const c = createReadThroughCache<string>();
    let release!: (v: string) => void;
    const slow = c.load('k', () => new Promise<string>((r) => (release = r)));
    c.forget('k'); // the write (or the standby's invalidation) lands meanwhile
    release('old');
    expect(await slow).toBe('old');
    expect(await c.load('k', async () => 'new')).toBe('new');
  });

  it('keeps only what keep() allows', async () => {
    const c = createReadThroughCache<string | null>();
    expect(await c.load('k', async () => null, (v) => v !== null)).toBeNull();
    expect(await c.load('k', async () => 'v', (v) => v !== null)).toBe('v');
  });
});
