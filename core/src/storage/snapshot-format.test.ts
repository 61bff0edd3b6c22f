import { decodeSnapshot, encodeSnapshot } from './snapshot-format.js';
import type { PhysicalEntry } from './physical.js';

async function* from<T>(items: T[]): AsyncIterable<T> {
  yield* items;
}
async function bytesOf(entries: PhysicalEntry[]): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of encodeSnapshot(from(entries), 'inmem')) chunks.push(c);
  return Buffer.concat(chunks);
}
/** Decodes `bytes` fed in small chunks; the entries and the result, or the error's message. */
async function decode(bytes: Buffer): Promise<{ entries: PhysicalEntry[]; count?: number; error?: string }> {
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += 7) chunks.push(bytes.subarray(i, i + 7));
  const entries: PhysicalEntry[] = [];
  const it = decodeSnapshot(from(chunks));
  try {
    for (;;) {
      const r = await it.next();
      if (r.done) return { entries, count: r.value.count };
      entries.push(r.value);
    }
  } catch (err) {
    return { entries, error: (err as Error).message };
  }
}

const ENTRIES: PhysicalEntry[] = [
  { key: 'a', value: Buffer.from('1') },
  { key: 'core/keyring', value: Buffer.alloc(300, 7) },
  { key: 'sys/token/\u{1F600}', value: Buffer.alloc(0) },
];

describe('snapshot file format', () => {
  it('round-trips entries, streamed in chunks', async () => {
    const d = await decode(await bytesOf(ENTRIES));
    expect(d.error).toBeUndefined();
    expect(d.count).toBe(3);
    expect(d.entries.map((e) => [e.key, Buffer.from(e.value).toString('hex')])).toEqual(ENTRIES.map((e) => [e.key, Buffer.from(e.value).toString('hex')]));
  });

  it('refuses every truncation, any flipped byte, trailing bytes and a foreign file', async () => {
    const good = await bytesOf(ENTRIES);
    for (let n = 0; n < good.length; n++) expect((await decode(good.subarray(0, n))).error).toMatch(/snapshot refused: .*(truncated|magic)/);
    for (let i = 0; i < good.length; i++) {
      const bad = Buffer.from(good);
      bad[i]! ^= 0x01;
      expect((await decode(bad)).error).toMatch(/snapshot refused/);
    }
    expect((await decode(Buffer.concat([good, Buffer.from([0])]))).error).toMatch(/bytes after its end/);
    expect((await decode(Buffer.from('{"not":"a snapshot"}'))).error).toMatch(/not a Strongroom snapshot/);
  });

  it('refuses keys out of order or repeated (the checksum would not catch a writer that sent them so)', async () => {
    expect((await decode(await bytesOf([ENTRIES[1]!, ENTRIES[0]!]))).error).toMatch(/keys out of order/);
    expect((await decode(await bytesOf([ENTRIES[0]!, ENTRIES[0]!]))).error).toMatch(/keys out of order/);
  });
});
