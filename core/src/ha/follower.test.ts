/** The follower over a fake feed: reads after its number on every cue, waits for an index, rebuilds on a gap. */
import type { ChangeFeed } from '../storage/backend.js';
import { createFollower } from './follower.js';

const quiet = { warn: () => undefined };

function fakeFeed() {
  const log: Array<{ seq: number; key: string }> = [];
  let cue: () => void = () => undefined;
  let oldest = 1;
  const feed: ChangeFeed & { commit(key: string): number; cut(below: number): void } = {
    head: async () => log.length,
    lastWritten: () => log.length,
    async since(after) {
      const head = log.length;
      if (head > after && oldest > after + 1) return { head, keys: [], complete: false };
      return { head, keys: log.filter((e) => e.seq > after).map((e) => e.key), complete: true };
    },
    subscribe(fn) {
      cue = fn;
      return { close: async () => undefined };
    },
    commit(key) {
      log.push({ seq: log.length + 1, key });
      cue();
      return log.length;
    },
    cut(below) {
      oldest = below;
    },
  };
  return feed;
}

it('applies every change after its number, once, and answers index waits', async () => {
  const feed = fakeFeed();
  feed.commit('before');
  const applied: string[] = [];
  const f = createFollower({ feed, from: 1, apply: async (keys) => void applied.push(...keys), onGap: () => undefined, logger: quiet });
  const a = feed.commit('a');
  expect(await f.caughtUp(a, 5_000)).toBe(true);
  feed.commit('b');
  await f.catchUp();
  expect(applied).toEqual(['a', 'b']);
  expect(f.applied).toBe(3);
  expect(await f.caughtUp(99, 50)).toBe(false);
  await f.stop();
});

it('asks for a rebuild when the log no longer reaches back to its number', async () => {
  const feed = fakeFeed();
  feed.commit('x');
  feed.commit('y');
  feed.cut(3);
  let gaps = 0;
  const f = createFollower({ feed, from: 0, apply: async () => undefined, onGap: () => void gaps++, logger: quiet });
  await f.catchUp();
  expect(gaps).toBe(1);
  await f.stop();
});
