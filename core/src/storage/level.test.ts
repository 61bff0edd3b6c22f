import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLevelPhysical } from './level.js';

describe('level physical', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'strongroom-level-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('shares one commit among concurrent writes (group commit)', async () => {
    const db = await createLevelPhysical({ path: dir });
    await Promise.all([
      ...Array.from({ length: 100 }, (_, i) => db.put(`k/${i}`, Buffer.from([i]))),
      db.batch([{ type: 'put', key: 'x', value: Buffer.from('x') }, { type: 'delete', key: 'k/0' }]),
      db.delete('k/1'),
    ]);
    const { commits, writes } = db.stats();
    expect(writes).toBe(102);
    expect(commits).toBeLessThan(10);
    // Call order is kept across the coalesced batch: the deletes came after the puts.
    expect(await db.get('k/0')).toBeNull();
    expect(await db.get('k/1')).toBeNull();
    expect(Buffer.from((await db.get('k/2')) as Uint8Array)[0]).toBe(2);
    await db.close();
  });

  it('keeps acknowledged writes across close and reopen', async () => {
    const db = await createLevelPhysical({ path: dir });
    await db.put('a/b', Buffer.from('one'));
    await db.batch([{ type: 'put', key: 'a/c', value: Buffer.from('two') }]);
    await db.close();
    const again = await createLevelPhysical({ path: dir });
    expect(Buffer.from((await again.get('a/b')) as Uint8Array).toString()).toBe('one');
    expect(await again.list('a/')).toEqual(['b', 'c']);
    await again.close();
  });

  it('flushes writes still queued when closed', async () => {
    const db = await createLevelPhysical({ path: dir });
    const writes = Array.from({ length: 20 }, (_, i) => db.put(`q/${i}`, Buffer.from('v')));
    await db.close();
    await Promise.all(writes);
    const again = await createLevelPhysical({ path: dir });
    expect(await again.list('q/')).toHaveLength(20);
    await again.close();
  });

  it('fails an invalid write alone, without failing its neighbours', async () => {
    const db = await createLevelPhysical({ path: dir });
    const results = await Promise.allSettled([
      db.put('ok/1', Buffer.from('v')),
      db.batch([{ type: 'put', key: 'ok/2', value: Buffer.from('v') }, { type: 'put', key: 'bad\udc00', value: Buffer.from('v') }]),
      db.put('ok/3', Buffer.from('v')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await db.list('ok/')).toEqual(['1', '3']);
    await db.close();
  });
});
