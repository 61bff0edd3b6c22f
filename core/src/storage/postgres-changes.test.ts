/**
 * The change feed against a real PostgreSQL (the shared test server; tables
 * of its own): fenced writes take consecutive numbers, log their keys and
 * announce them; a follower reads every change after its number, learns of
 * one by NOTIFY, and is told when the log no longer reaches back far enough.
 */
import { randomBytes } from 'node:crypto';
import { postgresUrl } from '../../../test/helpers/databases.js';
import { createPostgresChangeFeed } from './postgres-changes.js';
import { createPostgresLock } from './postgres-lock.js';
import { createPostgresPhysical, type PostgresPhysical } from './postgresql.js';

const quiet = { warn: () => undefined };
const b = (s: string) => Buffer.from(s);
let table = '';
const opened: PostgresPhysical[] = [];

beforeEach(() => {
  table = `chg_${randomBytes(6).toString('hex')}`;
});
afterEach(async () => {
  const first = opened[0];
  if (first) await first.db.raw(`DROP TABLE IF EXISTS "${table}", "${table}_ha", "${table}_ha_seq", "${table}_ha_log"`).catch(() => undefined);
  await Promise.all(opened.splice(0).map((p) => p.close()));
});

function node(): PostgresPhysical {
  const p = createPostgresPhysical({ connectionUrl: postgresUrl(), table, haTable: `${table}_ha`, maxParallel: 2, ha: true });
  opened.push(p);
  return p;
}

it('numbers every fenced write, logs its keys, announces it, and says when the log is cut', async () => {
  const active = node();
  const standby = node();
  const lock = createPostgresLock({ physical: active, identity: 'a', value: 'http://a', ttlMs: 60_000 });
  expect(await lock.tryAcquire()).toBe(true);
  active.fence('a');
  const feed = createPostgresChangeFeed(standby, quiet);
  const start = await feed.head();
  let announced = 0;
  const sub = feed.subscribe(() => void announced++);
  // The subscription reads once when it starts listening; then each commit is announced.
  await new Promise((r) => setTimeout(r, 500));
  const before = announced;
  await active.put('k1', b('1'));
  await active.delete('k0');
  await active.batch([
    { type: 'put', key: 'k2', value: b('2') },
    { type: 'put', key: 'k3', value: b('3') },
  ]);
  expect(active.lastWrittenSeq()).toBe(start + 3);
  for (let i = 0; i < 50 && announced < before + 3; i++) await new Promise((r) => setTimeout(r, 50));
  expect(announced).toBeGreaterThanOrEqual(before + 3);
  await sub.close();

  expect(await feed.since(start)).toEqual({ head: start + 3, keys: ['k1', 'k0', 'k2', 'k3'], complete: true });
  expect(await feed.since(start + 2)).toEqual({ head: start + 3, keys: ['k2', 'k3'], complete: true });
  expect(await feed.since(start + 3)).toEqual({ head: start + 3, keys: [], complete: true });
  // A follower further behind than the log reaches: it must rebuild.
  await active.db.raw(`DELETE FROM "${table}_ha_log" WHERE seq <= ?`, [start + 1]);
  expect((await feed.since(start)).complete).toBe(false);
  expect((await feed.since(start + 1)).complete).toBe(true);
});
