/**
 * The HA state machine over a lock that the tests break on purpose (a lost
 * row, an unreachable database, a failing load). The real PostgreSQL lock is
 * tested in storage/postgres-lock.test.ts and end to end in test/ha.
 */
import { createHaManager } from './ha-manager.js';
import type { HaLock, LockHolder } from '../storage/backend.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
// Generous margins: the machine running the tests may be loaded.
const timings = { ttlMs: 600, renewMs: 100, retryMs: 50, stepDownHoldMs: 400 };

/** One row shared by several fake nodes; `down` makes every call fail like an unreachable database. */
function fakeDb() {
  let row: (LockHolder & { until: number }) | null = null;
  const db = {
    down: false,
    /** Answered by holder() instead of the row while set: a read that raced a write, or a row not yet expired. */
    staleHolder: null as LockHolder | null,
    get row() {
      return row;
    },
    steal(identity: string) {
      row = { identity, value: `http://${identity}`, until: Date.now() + 60_000 };
    },
    lock(identity: string): Omit<HaLock, 'fenceWrites'> {
      const check = () => {
        if (db.down) throw new Error('ECONNREFUSED');
      };
      return {
        identity,
        async tryAcquire() {
          check();
          if (row && row.until > Date.now() && row.identity !== identity) return false;
          row = { identity, value: `http://${identity}`, until: Date.now() + timings.ttlMs };
          return true;
        },
        async renew() {
          check();
          if (!row || row.identity !== identity) return false;
          row.until = Date.now() + timings.ttlMs;
          return true;
        },
        async release() {
          check();
          if (row?.identity === identity) row = null;
        },
        async holder() {
          check();
          if (db.staleHolder) return db.staleHolder;
          return row && row.until > Date.now() ? { identity: row.identity, value: row.value } : null;
        },
      };
    },
  };
  return db;
}

function node(db: ReturnType<typeof fakeDb>, identity: string, over: { onActive?: () => Promise<void> } = {}) {
  const events: string[] = [];
  const ha = createHaManager({
    lock: db.lock(identity),
    selfAddress: `http://${identity}`,
    onActive: async () => {
      events.push('active');
      await over.onActive?.();
    },
    onStandby: async () => void events.push('standby'),
    logger: quiet,
    timings,
  });
  return { ha, events };
}

const managers: Array<{ stop(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stop()));
});

describe('HA manager', () => {
  it('makes the first node active before start() returns and the second a standby that knows the leader', async () => {
    const db = fakeDb();
    const a = node(db, 'a');
    const b = node(db, 'b');
    managers.push(a.ha, b.ha);
    await a.ha.start();
    await b.ha.start();
    expect([a.ha.state, b.ha.state]).toEqual(['active', 'standby']);
    expect(b.ha.leader()).toEqual({ identity: 'a', value: 'http://a', isSelf: false });
    expect(a.ha.leader()?.isSelf).toBe(true);
    expect(a.events).toEqual(['active']);
  });

  it('becomes a standby when another node holds the row, and knows that node as the leader', async () => {
    const db = fakeDb();
    const a = node(db, 'a');
    managers.push(a.ha);
    await a.ha.start();
    db.steal('b');
    await sleep(300);
    expect(a.ha.state).toBe('standby');
    expect(a.events).toEqual(['active', 'standby']);
    expect(a.ha.leader()).toMatchObject({ identity: 'b', isSelf: false });
    await a.ha.stop();
    expect(db.row?.identity).toBe('b');
  });

  it('stops acting as active when renewals fail for longer than the TTL, not before', async () => {
    const db = fakeDb();
    const a = node(db, 'a');
    managers.push(a.ha);
    await a.ha.start();
    db.down = true;
    await sleep(150);
    expect(a.ha.state).toBe('active');
    await sleep(800);
    expect(a.ha.state).toBe('standby');
    expect(a.events).toEqual(['active', 'standby']);
    // Back up: the expired row is taken again.
    db.down = false;
    await sleep(300);
    expect(a.ha.state).toBe('active');
  });

  it('releases the lock and stays out for a while when loading fails', async () => {
    const db = fakeDb();
    let fail = true;
    const a = node(db, 'a', {
      onActive: async () => {
        if (fail) throw new Error('mount table unreadable');
      },
    });
    managers.push(a.ha);
    await a.ha.start();
    expect(a.ha.state).toBe('standby');
    expect(a.events).toEqual(['active', 'standby']);
    expect(db.row).toBeNull();
    fail = false;
    await sleep(150);
    expect(a.ha.state).toBe('standby');
    await sleep(600);
    expect(a.ha.state).toBe('active');
  });

  it('hands over on step-down: released at once, the other node takes it, the first waits its hold', async () => {
    const db = fakeDb();
    const a = node(db, 'a');
    const b = node(db, 'b');
    managers.push(a.ha, b.ha);
    await a.ha.start();
    await b.ha.start();
    await a.ha.stepDown();
    expect(a.ha.state).toBe('standby');
    await sleep(200);
    expect([a.ha.state, b.ha.state]).toEqual(['standby', 'active']);
    expect(a.ha.leader()).toMatchObject({ identity: 'b' });
    // Stopping the active node releases the row for the other one.
    await b.ha.stop();
    expect(db.row).toBeNull();
    await sleep(600);
    expect(a.ha.state).toBe('active');
  });

  it('a stepped-down node never takes itself for the leader, even from a read that raced its release', async () => {
    const db = fakeDb();
    const a = node(db, 'a');
    managers.push(a.ha);
    await a.ha.start();
    await a.ha.stepDown();
    db.staleHolder = { identity: 'a', value: 'http://a' };
    expect(await a.ha.refreshLeader()).toBeNull();
    await sleep(120); // standby ticks read the holder too (still inside the step-down hold)
    expect(a.ha.leader()).toBeNull();
    db.staleHolder = null;
  });
});
