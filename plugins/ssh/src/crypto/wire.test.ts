import { reader, wireWriter } from './wire.js';

const hex = (b: Buffer) => b.toString('hex');

describe('SSH wire writer', () => {
  test('uint32, uint64, strings and mpints as RFC 4251 section 5 writes them', () => {
    const w = wireWriter();
    w.u32(0xdeadbeef);
    w.u64(2n ** 64n - 1n);
    w.string('ä');
    w.string(Buffer.from([1, 2]));
    // RFC 4251's examples: 0 is empty; 0x80 takes a leading zero; leading zero bytes go.
    w.mpint(Buffer.from([0, 0]));
    w.mpint(Buffer.from([0x80]));
    w.mpint(Buffer.from([0, 0, 0x12, 0x34]));
    expect(hex(w.bytes())).toBe(['deadbeef', 'ffffffffffffffff', '00000002c3a4', '000000020102', '00000000', '000000020080', '000000021234'].join(''));
  });

  test('nested strings, and a buffer that grows keeps what was written', () => {
    const w = wireWriter(8);
    const outer = w.begin();
    w.string('ab');
    const inner = w.begin();
    w.raw(Buffer.alloc(100, 7));
    w.end(inner);
    w.end(outer);
    const r = reader(w.bytes());
    const nested = reader(r.string());
    expect(nested.string().toString()).toBe('ab');
    expect(nested.string()).toEqual(Buffer.alloc(100, 7));
    expect(r.rest().length).toBe(0);
  });
});
