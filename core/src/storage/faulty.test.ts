import { createInmemPhysical } from './inmem.js';
import { createFaultyStore, InjectedFaultError } from '@strongroom/sdk-plugin/host';
import { createView } from './view.js';

describe('faulty store', () => {
  it('fails the next n operations of a type, then recovers', async () => {
    const inner = createInmemPhysical();
    const s = createFaultyStore(inner);
    s.faults.failNext(2, 'put');
    await expect(s.get('a')).resolves.toBeNull();
    await expect(s.put('a', Buffer.from('1'))).rejects.toBeInstanceOf(InjectedFaultError);
    await expect(s.put('a', Buffer.from('1'))).rejects.toBeInstanceOf(InjectedFaultError);
    await s.put('a', Buffer.from('2'));
    expect(Buffer.from((await inner.get('a')) as Uint8Array).toString()).toBe('2');
    expect(s.faults.injected).toBe(2);
  });

  it('fails selected keys and leaves the inner store untouched', async () => {
    const inner = createInmemPhysical();
    const s = createFaultyStore(inner, { failWhen: (op, key) => op === 'batch' && key.startsWith('sys/expire/') });
    await expect(s.batch([{ type: 'put', key: 'sys/expire/x', value: Buffer.from('l') }])).rejects.toThrow(/injected/);
    expect(await inner.get('sys/expire/x')).toBeNull();
    await s.batch([{ type: 'put', key: 'sys/token/x', value: Buffer.from('t') }]);
    expect(await inner.list('sys/')).toEqual(['token/']);
  });

  it('fails at the configured rate with an injected random source', async () => {
    const rolls = [0.9, 0.1, 0.6, 0.2];
    const s = createFaultyStore(createInmemPhysical(), { errorRate: 0.5, random: () => rolls.shift() ?? 1 });
    const results = await Promise.allSettled([s.get('a'), s.get('a'), s.get('a'), s.get('a')]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
  });

  it('passes other methods through to the inner store', async () => {
    const inner = createInmemPhysical();
    const s = createFaultyStore(inner);
    await s.close();
    await expect(inner.get('a')).rejects.toThrow(/closed/);
  });
});

describe('view', () => {
  it('sees only its prefix and writes only under it', async () => {
    const p = createInmemPhysical();
    await p.put('logical/other/secret', Buffer.from('no'));
    const v = createView(p, 'logical/mine/');
    await v.put('foo', Buffer.from('1'));
    await v.batch([{ type: 'put', key: 'dir/bar', value: Buffer.from('2') }]);
    expect(await p.list('logical/mine/')).toEqual(['dir/', 'foo']);
    expect(await v.list('')).toEqual(['dir/', 'foo']);
    expect(await v.get('../other/secret')).toBeNull();
    const scanned: string[] = [];
    for await (const e of v.scan('')) scanned.push(e.key);
    expect(scanned).toEqual(['dir/bar', 'foo']);
    expect(v.prefix).toBe('logical/mine/');
  });
});
