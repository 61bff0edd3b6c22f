/**
 * The HA lock and write fencing against a real PostgreSQL (the shared test
 * server of scripts/services/services.js; each test has tables of its own).
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { StrongroomError } from '@strongroom/sdk-plugin/host';
import { postgresUrl } from '../../../test/helpers/databases.js';
import { FencedWriteError, createPostgresPhysical, type PostgresPhysical } from './postgresql.js';
import { createPostgresLock } from './postgres-lock.js';

const opened: PostgresPhysical[] = [];
let table = '';

function node(): PostgresPhysical {
  const p = createPostgresPhysical({ connectionUrl: postgresUrl(), table, haTable: `${table}_ha`, maxParallel: 2, ha: true });
  opened.push(p);
  return p;
}

beforeEach(() => {
  table = `ha_${randomBytes(6).toString('hex')}`;
});

afterEach(async () => {
  const first = opened[0];
  if (first) await first.db.raw(`DROP TABLE IF EXISTS "${table}", "${table}_ha", "${table}_ha_seq", "${table}_ha_log"`).catch(() => undefined);
  await Promise.all(opened.splice(0).map((p) => p.close()));
});

const b = (s: string) => Buffer.from(s);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('postgresql HA lock', () => {
  it('is held by one node at a time and taken over only once it has expired by the database clock', async () => {
    const [pa, pb] = [node(), node()];
    const a = createPostgresLock({ physical: pa, identity: 'node-a', value: 'http://a:8200', ttlMs: 1500 });
    const lb = createPostgresLock({ physical: pb, identity: 'node-b', value: 'http://b:8200', ttlMs: 1500 });
    expect(await a.tryAcquire()).toBe(true);
    expect(await lb.tryAcquire()).toBe(false);
    expect(await lb.holder()).toMatchObject({ identity: 'node-a', value: 'http://a:8200' });
    // Renewed, it stays a's past its first TTL.
    await sleep(1000);
    expect(await a.renew()).toBe(true);
    await sleep(1000);
    expect(await lb.tryAcquire()).toBe(false);
    // Not renewed: b takes it after expiry, and a's renewal then fails.
    await sleep(1700);
    expect(await lb.holder()).toBeNull();
    expect(await lb.tryAcquire()).toBe(true);
    expect(await a.renew()).toBe(false);
    expect(await a.tryAcquire()).toBe(false);
    // Release by a non-holder changes nothing; by the holder frees it at once.
    await a.release();
    expect((await a.holder())?.identity).toBe('node-b');
    await lb.release();
    expect(await a.tryAcquire()).toBe(true);
  });

  it('compares expiry with the database clock, not the node clock', async () => {
    const p = node();
    const a = createPostgresLock({ physical: p, identity: 'node-a', value: 'http://a:8200', ttlMs: 60_000 });
    await p.ready;
    // A row valid for an hour by the database's clock: no node may take it, whatever its own clock says.
    await p.db.raw(`INSERT INTO "${table}_ha" VALUES ('core/lock', 'other', 'http://o:8200', now() + interval '1 hour')`);
    expect(await a.tryAcquire()).toBe(false);
    await p.db.raw(`UPDATE "${table}_ha" SET valid_until = now() - interval '1 second'`);
    expect(await a.tryAcquire()).toBe(true);
  });

  it("is taken at once, before it expires, when its holder's session is gone (the holder's process died)", async () => {
    const [pa, pb] = [node(), node()];
    const a = createPostgresLock({ physical: pa, identity: 'node-a', value: 'http://a:8200', ttlMs: 60_000 });
    const lb = createPostgresLock({ physical: pb, identity: 'node-b', value: 'http://b:8200', ttlMs: 60_000 });
    expect(await a.tryAcquire()).toBe(true);
    // A live holder keeps it.
    expect(await lb.tryAcquire()).toBe(false);
    expect(await a.renew()).toBe(true);
    // As a SIGKILL does: the holder's connection ends and PostgreSQL ends its backend.
    await pb.db.raw(`SELECT pg_terminate_backend(ha_pid) FROM "${table}_ha"`);
    await sleep(200);
    expect(await lb.tryAcquire()).toBe(true);
    expect(await lb.holder()).toMatchObject({ identity: 'node-b' });
    expect(await a.renew()).toBe(false);
    await lb.release();
    await a.release();
  });

  it('fences writes: a node that lost the lock can no longer put, delete or batch', async () => {
    const [pa, pb] = [node(), node()];
    const a = createPostgresLock({ physical: pa, identity: 'node-a', value: 'http://a:8200', ttlMs: 800 });
    const lb = createPostgresLock({ physical: pb, identity: 'node-b', value: 'http://b:8200', ttlMs: 800 });
    pa.fence('node-a');
    pb.fence('node-b');
    await Promise.all([pa.ready, pb.ready]); // both nodes connected, so a refusal below is the fence, not "not reachable yet"
    // Nobody holds it yet: fenced writes are refused.
    await expect(pa.put('k', b('x'))).rejects.toBeInstanceOf(FencedWriteError);
    expect(await a.tryAcquire()).toBe(true);
    await pa.put('k', b('a1'));
    await pa.batch([{ type: 'put', key: 'k2', value: b('a2') }]);
    await expect(pb.put('k', b('b1'))).rejects.toBeInstanceOf(FencedWriteError);
    await expect(pb.delete('k')).rejects.toBeInstanceOf(FencedWriteError);
    await sleep(1000);
    expect(await lb.tryAcquire()).toBe(true);
    const refused = await pa.put('k', b('stale')).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(FencedWriteError);
    expect((refused as StrongroomError).code).toBe('unavailable');
    await expect(pa.delete('k2')).rejects.toBeInstanceOf(FencedWriteError);
    await expect(pa.batch([{ type: 'put', key: 'k3', value: b('stale') }, { type: 'delete', key: 'k' }])).rejects.toBeInstanceOf(FencedWriteError);
    expect(Buffer.from((await pb.get('k')) as Uint8Array).toString()).toBe('a1');
    expect(await pb.get('k3')).toBeNull();
    await pb.put('k', b('b1'));
    await pb.delete('k2');
    expect(Buffer.from((await pa.get('k')) as Uint8Array).toString()).toBe('b1');
    expect(await pa.get('k2')).toBeNull();
  });

  it('keeps retrying an unreachable database and says why, without its password', async () => {
    const port = await new Promise<number>((res) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => res(p));
      });
    });
    const warnings: string[] = [];
    const p = createPostgresPhysical({
      connectionUrl: `postgresql://someone:s3cret-pw@127.0.0.1:${port}/db`,
      logger: { warn: (m) => warnings.push(m), info: () => undefined },
    });
    opened.push(p);
    await sleep(1200);
    expect(warnings.length).toBeGreaterThanOrEqual(2);
    expect(warnings[0]).toMatch(/cannot reach PostgreSQL.*ECONNREFUSED.*retrying/);
    const err = (await p.get('x').catch((e: unknown) => e)) as StrongroomError;
    expect(err.code).toBe('unavailable');
    expect(err.message).toMatch(/not reachable yet/);
    expect([...warnings, err.message].join('\n')).not.toContain('s3cret-pw');
  });
});
