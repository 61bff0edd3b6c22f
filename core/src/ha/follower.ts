/**
 * A standby following the cluster's change feed: on each cue (an announced
 * commit, a reconnect, a poll) it reads every change after the last number it
 * applied, applies it (drops the caches that held those keys) and moves its
 * number on. Reads run one at a time; cues arriving meanwhile fold into one
 * more read. When the log no longer reaches back to its number (a standby cut
 * off for long), `onGap` rebuilds the standby's state from storage instead.
 *
 * `applied` is what the index headers compare with: a read that carries an
 * index this node has not applied yet waits for it (`caughtUp`).
 */
import type { ChangeFeed } from '../storage/backend.js';

export interface Follower {
  /** The number of the last change applied here. */
  readonly applied: number;
  /** True once `applied >= seq`, false if that takes longer than `timeoutMs`. */
  caughtUp(seq: number, timeoutMs: number): Promise<boolean>;
  /** Reads and applies everything committed up to now (before promotion). */
  catchUp(): Promise<void>;
  stop(): Promise<void>;
}

export interface FollowerDeps {
  feed: ChangeFeed;
  /** The number the standby's state was read at (taken before reading it). */
  from: number;
  apply(keys: string[]): Promise<void>;
  /** The log does not reach back far enough: the state must be rebuilt (this follower reads no more). */
  onGap(): void;
  logger: { warn(m: string, meta?: Record<string, unknown>): void };
}

export function createFollower(deps: FollowerDeps): Follower {
  let applied = deps.from;
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  const waiters = new Set<{ seq: number; done: (ok: boolean) => void }>();

  const settle = () => {
    for (const w of waiters) if (applied >= w.seq) w.done(true);
  };

  const readOnce = async (): Promise<void> => {
    const r = await deps.feed.since(applied);
    if (stopped) return;
    if (!r.complete) {
      deps.logger.warn('ha: the change log no longer reaches back to what this standby applied; rebuilding its state', { applied, head: r.head });
      stopped = true;
      deps.onGap();
      return;
    }
    if (r.keys.length > 0) await deps.apply(r.keys);
    applied = Math.max(applied, r.head);
  };

  const pump = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        try {
          await readOnce();
        } catch (err) {
          deps.logger.warn('ha: reading the change log failed; retrying on the next cue', { error: err instanceof Error ? err.message : String(err) });
          break;
        }
        settle();
      } while (again && !stopped);
    })().finally(() => {
      running = null;
    });
    return running;
  };

  const subscription = deps.feed.subscribe(() => void pump());

  return {
    get applied() {
      return applied;
    },
    caughtUp(seq, timeoutMs) {
      if (applied >= seq) return Promise.resolve(true);
      return new Promise<boolean>((resolve) => {
        const w = {
          seq,
          done: (ok: boolean) => {
            clearTimeout(timer);
            waiters.delete(w);
            resolve(ok);
          },
        };
        const timer = setTimeout(() => w.done(false), timeoutMs);
        waiters.add(w);
        void pump();
      });
    },
    async catchUp() {
      // Its own read after any in flight, and its errors are the caller's: a promotion must not go on stale.
      await running?.catch(() => undefined);
      await readOnce();
      settle();
    },
    async stop() {
      stopped = true;
      for (const w of waiters) w.done(false);
      await subscription.close();
      await running?.catch(() => undefined);
    },
  };
}
