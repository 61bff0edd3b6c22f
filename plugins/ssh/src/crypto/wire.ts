/** The SSH wire encoding (RFC 4251 section 5): what certificates and signatures are made of. */

export function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

export function u64(n: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt.asUintN(64, n));
  return b;
}

/** `string`: a uint32 length, then the bytes. */
export function str(v: Buffer | string): Buffer {
  const b = typeof v === 'string' ? Buffer.from(v, 'utf8') : v;
  return Buffer.concat([u32(b.length), b]);
}

/** `mpint` of an unsigned big-endian magnitude: no leading zero bytes, one added when the top bit is set. */
export function mpint(magnitude: Buffer): Buffer {
  let i = 0;
  while (i < magnitude.length && magnitude[i] === 0) i++;
  let m = magnitude.subarray(i);
  if (m.length > 0 && (m[0] as number) & 0x80) m = Buffer.concat([Buffer.from([0]), m]);
  return str(m);
}

/** Reads consecutive `string`s from a buffer. */
export function reader(buf: Buffer) {
  let off = 0;
  return {
    string(): Buffer {
      if (off + 4 > buf.length) throw new Error('truncated SSH data');
      const n = buf.readUInt32BE(off);
      if (off + 4 + n > buf.length) throw new Error('truncated SSH data');
      const out = buf.subarray(off + 4, off + 4 + n);
      off += 4 + n;
      return out;
    },
    rest: () => buf.subarray(off),
  };
}
