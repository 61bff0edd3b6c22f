/**
 * In-memory Physical for tests and the in-process test core. Same semantics as
 * the level backend (code-point order, atomic batches, copies in and out so a
 * caller mutating a buffer never changes what is stored).
 */
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { Physical, PhysicalEntry, PhysicalOp } from './physical.js';
import { assertValidKey, compareKeys, scanWindow } from './keys.js';
import { readSnapshotFile } from './snapshot-format.js';

export function createInmemPhysical(): Physical {
  const data = new Map<string, Buffer>();
  let closed = false;

  const open = (): void => {
    if (closed) throw new Error('storage is closed');
  };

  const sortedKeysUnder = (prefix: string): string[] => {
    const keys: string[] = [];
    for (const k of data.keys()) if (k.startsWith(prefix)) keys.push(k);
    return keys.sort(compareKeys);
  };

  return {
    async get(key) {
      open();
      const v = data.get(key);
      return v === undefined ? null : Buffer.from(v);
    },
    async put(key, value) {
      open();
      assertValidKey(key);
      data.set(key, Buffer.from(value));
    },
    async delete(key) {
      open();
      data.delete(key);
    },
    async list(prefix) {
      open();
      const out: string[] = [];
      let lastFolder: string | null = null;
      for (const k of sortedKeysUnder(prefix)) {
        const rest = k.slice(prefix.length);
        const i = rest.indexOf('/');
        if (i === -1) {
          if (rest !== '') out.push(rest);
          continue;
        }
        const folder = rest.slice(0, i + 1);
        if (folder !== lastFolder) out.push(folder);
        lastFolder = folder;
      }
      return out;
    },
    async batch(ops: PhysicalOp[]) {
      open();
      for (const op of ops) if (op.type === 'put') assertValidKey(op.key);
      for (const op of ops) {
        if (op.type === 'put') data.set(op.key, Buffer.from(op.value));
        else data.delete(op.key);
      }
    },
    async *scan(prefix): AsyncIterable<PhysicalEntry> {
      open();
      for (const key of sortedKeysUnder(prefix)) {
        const v = data.get(key);
        if (v !== undefined) yield { key, value: Buffer.from(v) };
      }
    },
    async *scanKeys(prefix, range): AsyncIterable<string> {
      open();
      const { after, limit } = scanWindow(prefix, range);
      const keys = after === null ? sortedKeysUnder(prefix) : sortedKeysUnder(prefix).filter((k) => compareKeys(k, after) > 0);
      yield* limit > 0 ? keys.slice(0, limit) : keys;
    },
    async close() {
      closed = true;
      data.clear();
    },
    snapshots: {
      // The entries as they are now (the values are never mutated in place, so the references hold the instant).
      async *read(): AsyncIterable<PhysicalEntry> {
        open();
        const now = sortedKeysUnder('').map((key) => ({ key, value: data.get(key) as Buffer }));
        yield* now;
      },
      stagingDir: tmpdir(),
      async restore(file) {
        open();
        const next = new Map<string, Buffer>();
        for await (const e of readSnapshotFile(file)) next.set(e.key, Buffer.from(e.value));
        data.clear();
        for (const [k, v] of next) data.set(k, v);
        rmSync(file, { force: true });
      },
    },
  };
}
