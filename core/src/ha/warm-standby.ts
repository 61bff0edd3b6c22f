/**
 * A standby kept warm: unsealed, it builds the same state as the active node
 * (mount tables, policies, tokens, its own plugin processes) without writing
 * anything, then follows the change feed so its caches stay current
 * (ha/follower.ts, ha/invalidation.ts). A configuration change it cannot
 * patch in place, or a feed it fell too far behind, rebuilds the state;
 * requests are forwarded meanwhile. On takeover, `promote` applies what is
 * left of the feed and hands the state over to be activated, so failover
 * needs no reload. A build that fails (the cluster is being set up and a
 * default it needs is not written yet) is retried.
 */
import type { ChangeFeed } from '../storage/backend.js';
import { createFollower, type Follower } from './follower.js';

const RETRY_MS = 1_000;

export interface WarmStandby {
  /** Following the feed with its state built: requests may be served. */
  readonly follower: Follower | null;
  /** Builds the standby's state in the background (retried until it succeeds or `stop`/`promote`). */
  start(): void;
  /** On takeover: true when the state is built and current (activate it); false when it must be built afresh. */
  promote(): Promise<boolean>;
  /** Stops following and tears the state down (seal, shutdown). */
  stop(): Promise<void>;
}

export interface WarmStandbyDeps {
  feed: ChangeFeed;
  /** Re-reads the keyring and drops the barrier's cache. */
  refreshBarrier(): Promise<void>;
  /** Builds the state as a standby (postUnseal without activation). */
  build(): Promise<void>;
  teardown(): Promise<void>;
  /** Applies changed keys; `rebuild` when the state must be built again. */
  invalidate(keys: string[]): Promise<{ rebuild: boolean }>;
  logger: { info(m: string, meta?: Record<string, unknown>): void; warn(m: string, meta?: Record<string, unknown>): void };
}

export function createWarmStandby(deps: WarmStandbyDeps): WarmStandby {
  const { logger } = deps;
  let follower: Follower | null = null;
  /** Bumped by start/promote/stop: a build of an older generation gives up. */
  let gen = 0;
  let building: Promise<void> = Promise.resolve();
  let stale = false;

  const errText = (err: unknown) => (err instanceof Error ? err.message : String(err));
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms).unref());

  const drop = async (): Promise<void> => {
    const f = follower;
    follower = null;
    await f?.stop();
    await deps.teardown().catch((err: unknown) => logger.warn('ha: tearing down the standby state failed', { error: errText(err) }));
  };

  const build = async (mine: number): Promise<void> => {
    for (let attempt = 0; mine === gen; attempt++) {
      try {
        stale = false;
        await deps.refreshBarrier();
        // The number first, the state after: whatever commits while the state is read is applied again.
        const from = await deps.feed.head();
        const started = Date.now();
        await deps.build();
        if (mine !== gen) return void (await drop());
        follower = createFollower({
          feed: deps.feed,
          from,
          logger,
          apply: async (keys) => {
            const r = await deps.invalidate(keys);
            if (r.rebuild) rebuildSoon();
          },
          onGap: () => rebuildSoon(),
        });
        logger.info('ha: standby state built; serving reads', { ms: Date.now() - started, from });
        return;
      } catch (err) {
        await drop();
        if (mine !== gen) return;
        if (attempt === 0 || attempt % 30 === 0) logger.warn('ha: building the standby state failed; retrying', { error: errText(err) });
        await sleep(RETRY_MS);
      }
    }
  };

  /** Out of the follower's read (which awaits `apply`): its stop would wait for itself. */
  const rebuildSoon = (): void => {
    if (stale) return;
    stale = true;
    const mine = gen;
    setImmediate(() => {
      if (mine !== gen) return;
      building = building.then(async () => {
        if (mine !== gen) return;
        logger.info('ha: the configuration changed on the active node; rebuilding the standby state');
        await drop();
        await build(mine);
      });
    });
  };

  return {
    get follower() {
      return stale ? null : follower;
    },
    start() {
      const mine = ++gen;
      building = building.then(() => build(mine));
    },
    async promote() {
      gen++;
      await building;
      if (!follower || stale) {
        await drop();
        return false;
      }
      // This node holds the lock: nothing commits any more that it has not read after this.
      await follower.catchUp();
      const f = follower;
      follower = null;
      await f.stop();
      if (stale) {
        await deps.teardown();
        return false;
      }
      return true;
    },
    async stop() {
      gen++;
      await building;
      await drop();
    },
  };
}
