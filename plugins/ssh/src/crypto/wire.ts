/** The SSH wire encoding (RFC 4251 section 5): what certificates and signatures are made of. */

/**
 * Writes SSH wire data into one growing buffer. A certificate is some twenty
 * fields, several nested in `string`s: a buffer per field, then concat, cost
 * about a fifth of an ed25519 signature per certificate (issue 31).
 */
export interface WireWriter {
  u32(n: number): void;
  u64(n: bigint): void;
  /** `string`: a uint32 length, then the bytes (a JS string as UTF-8). */
  string(v: Buffer | string): void;
  /** Bytes as they are (already wire data). */
  raw(b: Buffer): void;
  /** `mpint` of an unsigned big-endian magnitude: no leading zero bytes, one added when the top bit is set. */
  mpint(magnitude: Buffer): void;
  /** Opens a `string` whose content the next writes make; `end` with what this returns closes it. */
  begin(): number;
  end(mark: number): void;
  /** What is written so far; valid until the next write. */
  bytes(): Buffer;
}

export function wireWriter(initialSize = 1024): WireWriter {
  let buf = Buffer.allocUnsafe(initialSize);
  let off = 0;
  const room = (n: number) => {
    if (off + n <= buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(buf.length * 2, off + n));
    buf.copy(next, 0, 0, off);
    buf = next;
  };
  const w: WireWriter = {
    u32(n) {
      room(4);
      off = buf.writeUInt32BE(n >>> 0, off);
    },
    u64(n) {
      room(8);
      off = buf.writeBigUInt64BE(BigInt.asUintN(64, n), off);
    },
    string(v) {
      const n = typeof v === 'string' ? Buffer.byteLength(v, 'utf8') : v.length;
      room(4 + n);
      off = buf.writeUInt32BE(n, off);
      off += typeof v === 'string' ? buf.write(v, off, 'utf8') : v.copy(buf, off);
    },
    raw(b) {
      room(b.length);
      off += b.copy(buf, off);
    },
    mpint(magnitude) {
      let i = 0;
      while (i < magnitude.length && magnitude[i] === 0) i++;
      const pad = i < magnitude.length && (magnitude[i] as number) & 0x80 ? 1 : 0;
      room(4 + pad + magnitude.length - i);
      off = buf.writeUInt32BE(pad + magnitude.length - i, off);
      if (pad) buf[off++] = 0;
      off += magnitude.copy(buf, off, i);
    },
    begin() {
      room(4);
      const mark = off;
      off += 4;
      return mark;
    },
    end(mark) {
      buf.writeUInt32BE(off - mark - 4, mark);
    },
    bytes: () => buf.subarray(0, off),
  };
  return w;
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
