/**
 * The snapshot file: every physical entry, copied as stored (values are the
 * barrier's ciphertext, so a snapshot reveals nothing without the unseal
 * keys), in key order, with a SHA-256 over the whole file.
 *
 *   "SRSNAP01"                                    magic, 8 bytes
 *   u32 n, n bytes of JSON                        header: { format, created_at, storage_type }
 *   per entry: 0x01, u32 k, key (UTF-8), u32 v, value
 *   0x00, u64 entry count, SHA-256 of every byte before it (32 bytes)
 *
 * Integers are big-endian. Keys are strictly ascending (code-point order,
 * which is both backends' order); a reader refuses anything else, a missing
 * end record (a truncated file), trailing bytes or a digest that does not
 * match. Both sides stream: neither holds more than one entry and a chunk.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { badRequest } from '@strongroom/sdk-plugin/host';
import type { PhysicalEntry } from './physical.js';
import { compareKeys } from './keys.js';

const MAGIC = Buffer.from('SRSNAP01', 'latin1');
const FORMAT = 1;
const ENTRY = 0x01;
const END = 0x00;
const DIGEST_BYTES = 32;
// Sanity bounds, so a corrupt length is refused instead of buffered.
const MAX_HEADER = 64 * 1024;
const MAX_KEY = 64 * 1024;
const MAX_VALUE = 256 * 1024 * 1024;
// Entries are written out in chunks of about this size.
const CHUNK = 256 * 1024;

export interface SnapshotHeader {
  format: number;
  created_at: string;
  storage_type: string;
}

/** A snapshot that cannot be used: the message says why (a 400 to the client). */
const refused = (why: string) => badRequest(`snapshot refused: ${why}; nothing was changed`);

/** The snapshot file's bytes for these entries (which must come in key order), streamed. */
export async function* encodeSnapshot(entries: AsyncIterable<PhysicalEntry>, storageType: string, now = new Date()): AsyncIterable<Buffer> {
  const hash = createHash('sha256');
  const header = Buffer.from(JSON.stringify({ format: FORMAT, created_at: now.toISOString(), storage_type: storageType } satisfies SnapshotHeader), 'utf8');
  const len = Buffer.alloc(4);
  len.writeUInt32BE(header.length);
  let parts: Buffer[] = [MAGIC, len, header];
  let size = MAGIC.length + 4 + header.length;
  let count = 0n;
  const flush = (): Buffer => {
    const out = Buffer.concat(parts, size);
    hash.update(out);
    parts = [];
    size = 0;
    return out;
  };
  for await (const e of entries) {
    const key = Buffer.from(e.key, 'utf8');
    const head = Buffer.alloc(5);
    head[0] = ENTRY;
    head.writeUInt32BE(key.length, 1);
    const vlen = Buffer.alloc(4);
    vlen.writeUInt32BE(e.value.length);
    parts.push(head, key, vlen, Buffer.from(e.value.buffer, e.value.byteOffset, e.value.byteLength));
    size += 5 + key.length + 4 + e.value.length;
    count++;
    if (size >= CHUNK) yield flush();
  }
  const end = Buffer.alloc(9);
  end[0] = END;
  end.writeBigUInt64BE(count, 1);
  parts.push(end);
  size += end.length;
  const last = flush();
  yield Buffer.concat([last, hash.digest()]);
}

/**
 * The entries of a snapshot file, checked as they are read. The checksum is
 * known only at the end: a caller treats the entries as valid only once the
 * iteration completed without throwing (it returns the header and the count).
 */
export async function* decodeSnapshot(source: AsyncIterable<Uint8Array>): AsyncGenerator<PhysicalEntry, { header: SnapshotHeader; count: number }> {
  const it = source[Symbol.asyncIterator]();
  const hash = createHash('sha256');
  let buf = Buffer.alloc(0);
  let ended = false;
  /** The next n bytes (hashed unless told not to); throws at a premature end. */
  const take = async (n: number, what: string, hashed = true): Promise<Buffer> => {
    while (buf.length < n) {
      if (ended) throw refused(`the file is truncated (it ends inside ${what})`);
      const r = await it.next();
      if (r.done) ended = true;
      else buf = buf.length === 0 ? Buffer.from(r.value) : Buffer.concat([buf, r.value]);
    }
    const out = buf.subarray(0, n);
    buf = buf.subarray(n);
    if (hashed) hash.update(out);
    return out;
  };

  const magic = await take(MAGIC.length, 'the magic number');
  if (!magic.equals(MAGIC)) throw refused('not a Strongroom snapshot (bad magic number)');
  const headerLen = (await take(4, 'the header')).readUInt32BE(0);
  if (headerLen > MAX_HEADER) throw refused('the header is corrupt');
  const headerBytes = await take(headerLen, 'the header');
  let header: SnapshotHeader;
  try {
    header = JSON.parse(headerBytes.toString('utf8')) as SnapshotHeader;
  } catch {
    throw refused('the header is corrupt');
  }
  if (header?.format !== FORMAT) throw refused(`unknown snapshot format ${String(header?.format)}`);

  let count = 0;
  let previous: string | null = null;
  for (;;) {
    const tag = (await take(1, 'an entry'))[0];
    if (tag === END) break;
    if (tag !== ENTRY) throw refused('the file is corrupt (bad record tag)');
    const klen = (await take(4, 'an entry')).readUInt32BE(0);
    if (klen === 0 || klen > MAX_KEY) throw refused('the file is corrupt (bad key length)');
    const key = (await take(klen, 'an entry')).toString('utf8');
    if (previous !== null && compareKeys(previous, key) >= 0) throw refused('the file is corrupt (keys out of order)');
    previous = key;
    const vlen = (await take(4, 'an entry')).readUInt32BE(0);
    if (vlen > MAX_VALUE) throw refused('the file is corrupt (bad value length)');
    const value = Buffer.from(await take(vlen, 'an entry'));
    count++;
    yield { key, value };
  }
  const stated = (await take(8, 'the end record')).readBigUInt64BE(0);
  const digest = await take(DIGEST_BYTES, 'the checksum', false);
  if (!hash.digest().equals(digest)) throw refused('the checksum does not match (the file is corrupt)');
  if (stated !== BigInt(count)) throw refused('the file is corrupt (entry count)');
  if (buf.length > 0 || (!ended && !(await it.next()).done)) throw refused('the file has bytes after its end');
  return { header, count };
}

/** The entries of a snapshot file on disk, checked as they are read (see decodeSnapshot). */
export function readSnapshotFile(file: string): AsyncGenerator<PhysicalEntry, { header: SnapshotHeader; count: number }> {
  return decodeSnapshot(createReadStream(file, { highWaterMark: CHUNK }));
}

/** Reads a whole snapshot file through, refusing it if anything is wrong with it. */
export async function verifySnapshotFile(file: string): Promise<{ header: SnapshotHeader; count: number }> {
  const entries = readSnapshotFile(file);
  for (;;) {
    const r = await entries.next();
    if (r.done) return r.value;
  }
}

/** Writes chunks to a new file (owner-only) and fsyncs it. */
export async function writeFileSynced(file: string, chunks: AsyncIterable<Uint8Array>): Promise<void> {
  const fh = await open(file, 'wx', 0o600);
  try {
    for await (const c of chunks) await fh.write(c);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Makes `from` durable under the name `to` (same directory): fsync, rename, fsync of the directory. */
export async function commitFile(from: string, to: string): Promise<void> {
  const fh = await open(from, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(from, to);
  const dir = await open(dirname(to), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
