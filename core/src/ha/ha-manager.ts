/**
 * Active/standby for an unsealed node on shared storage.
 *
 * A standby tries to take the lock every `retryMs` and remembers who holds
 * it (for forwarding and sys/leader). The holder renews every `renewMs`; a
 * renewal that finds the row gone, or renewals failing for longer than the
 * lock's TTL, make it a standby again. `onActive` loads everything before the
 * node serves (state `activating` until it resolves); `onStandby` tears it
 * all down again (plugins stopped, caches dropped), so a standby holds no
 * state that could go stale. Transitions run one at a time.
 *
 * Safety does not rest on this loop noticing in time: storage fences every
 * write on holding the lock (storage/postgresql.ts).
 */
import type { HaLock, LockHolder } from '../storage/backend.js';

export type HaState = 'standby' | 'activating' | 'active' | 'stopped';

export interface HaTimings {
  /** How long the lock row stays valid without renewal. */
  ttlMs: number;
  renewMs: number;
  /** How often a standby tries to take the lock. */
  retryMs: number;
  /** After a step-down, how long this node leaves the lock to the others. */
  stepDownHoldMs: number;
}

/**
 * The timings a lock TTL (`ha_lock_ttl`, default 5 s) gives: renewed five times per TTL, a
 * standby asks every fifth of it and, seeing a holder, tries again the moment its lease ends
 * (by the database's clock), so it takes over at most one TTL after the active node's last renewal.
 */
export function haTimingsFor(ttlMs: number): HaTimings {
  const fifth = Math.max(50, Math.floor(ttlMs / 5));
  return { ttlMs, renewMs: fifth, retryMs: Math.min(1_000, fifth), stepDownHoldMs: ttlMs };
}

export interface HaManager {
  readonly state: HaState;
  /** When this node last became active. */
  readonly activeSince: Date | null;
  /** The holder as last seen (this node while active); null when none is known. */
  leader(): (LockHolder & { isSelf: boolean }) | null;
  /** Asks the database who holds the lock now (a standby that knows no leader yet, e.g. right after a hand-over). */
  refreshLeader(): Promise<(LockHolder & { isSelf: boolean }) | null>;
  /** Joins the election (after unseal); the first attempt is awaited. */
  start(): Promise<void>;
  /** Leaves it (seal, shutdown): tears down if active and releases the lock. */
  stop(): Promise<void>;
  /** Gives the lock up (if held) and leaves it to the others for a while. */
  stepDown(): Promise<void>;
}

export interface HaManagerDeps {
  // Fencing is the storage's side, switched on by the core at unseal.
  lock: Omit<HaLock, 'fenceWrites'>;
  /** The advertised address of this node (its lock value). */
  selfAddress: string;
  onActive(): Promise<void>;
  onStandby(): Promise<void>;
  logger: { info(m: string, meta?: Record<string, unknown>): void; warn(m: string, meta?: Record<string, unknown>): void; error(m: string, meta?: Record<string, unknown>): void };
  timings?: Partial<HaTimings>;
}

export function createHaManager(deps: HaManagerDeps): HaManager {
  const timings = { ...haTimingsFor(5_000), ...deps.timings };
  const { lock, logger } = deps;
  let state: HaState = 'stopped';
  let activeSince: Date | null = null;
  let known: LockHolder | null = null;
  let timer: NodeJS.Timeout | null = null;
  let lastRenewed = 0;
  let holdUntil = 0;
  /** A standby's next try: sooner than retryMs when the holder's lease ends sooner. */
  let nextTryMs = 0;
  let chain: Promise<unknown> = Promise.resolve();
  /** Generation: bumped by start/stop so a tick of an older run does nothing. */
  let run = 0;

  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const p = chain.then(fn);
    chain = p.catch(() => undefined);
    return p;
  };

  const errText = (err: unknown) => (err instanceof Error ? err.message : String(err));

  // A standby is never the leader: a holder naming this node is a read that raced our own
  // release (step-down) or a lost row not yet expired. Treat it as unknown, not as "self", or
  // sys/leader says is_self and forwarding refuses with "becoming the active node".
  const otherThanSelf = (h: LockHolder | null): LockHolder | null => (h && h.identity === lock.identity ? null : h);

  const becomeActive = async (): Promise<void> => {
    state = 'activating';
    lastRenewed = Date.now();
    known = { identity: lock.identity, value: deps.selfAddress };
    logger.info('ha: acquired the lock; loading before serving as the active node');
    const started = Date.now();
    try {
      await deps.onActive();
    } catch (err) {
      logger.error('ha: becoming active failed; releasing the lock', { error: errText(err) });
      await deps.onStandby().catch(() => undefined);
      await lock.release().catch(() => undefined);
      state = 'standby';
      known = null;
      holdUntil = Date.now() + timings.stepDownHoldMs;
      return;
    }
    if (state !== 'activating') return; // lost or stopped while loading: handled there
    state = 'active';
    activeSince = new Date();
    logger.info('ha: active', { loadMs: Date.now() - started });
  };

  const becomeStandby = async (why: string, release: boolean): Promise<void> => {
    const was = state;
    state = 'standby';
    activeSince = null;
    known = null;
    if (was === 'active' || was === 'activating') {
      logger.warn(`ha: no longer active (${why}); standing by`);
      await deps.onStandby().catch((err: unknown) => logger.error('ha: tearing down after losing the lock failed', { error: errText(err) }));
    }
    if (release) await lock.release().catch((err: unknown) => logger.warn('ha: releasing the lock failed; it expires by itself', { error: errText(err) }));
  };

  const tick = async (gen: number): Promise<void> => {
    if (gen !== run || state === 'stopped') return;
    if (state === 'active' || state === 'activating') {
      try {
        if (await lock.renew()) lastRenewed = Date.now();
        else await serial(() => becomeStandby('the lock was taken by another node', false));
      } catch (err) {
        // Past the TTL the row may already be someone else's: stop acting as active.
        if (Date.now() - lastRenewed > timings.ttlMs - timings.renewMs) await serial(() => becomeStandby(`renewing the lock failed: ${errText(err)}`, false));
        else logger.warn('ha: renewing the lock failed; retrying', { error: errText(err) });
      }
      return;
    }
    try {
      if (Date.now() >= holdUntil && (await lock.tryAcquire())) {
        if (gen !== run) return void (await lock.release().catch(() => undefined));
        // Activation runs outside the tick so renewals keep going while it loads.
        void serial(becomeActive);
        return;
      }
      const holder = await lock.holder();
      known = otherThanSelf(holder);
      // The moment the holder's lease ends, not up to a retry period later: takeover at once.
      nextTryMs = holder?.remainingMs !== undefined ? Math.max(5, holder.remainingMs + 5) : 0;
      if (!holder && Date.now() >= holdUntil) nextTryMs = 5;
    } catch (err) {
      known = null;
      logger.warn('ha: cannot reach the lock', { error: errText(err) });
    }
  };

  const schedule = (gen: number): void => {
    if (gen !== run || state === 'stopped') return;
    const delay = state === 'standby' ? (nextTryMs > 0 ? Math.min(nextTryMs, timings.retryMs) : timings.retryMs) : timings.renewMs;
    nextTryMs = 0;
    timer = setTimeout(() => {
      timer = null;
      void tick(gen).finally(() => schedule(gen));
    }, delay);
    timer.unref();
  };

  return {
    get state() {
      return state;
    },
    get activeSince() {
      return activeSince;
    },
    leader() {
      if (state === 'active' || state === 'activating') return { identity: lock.identity, value: deps.selfAddress, isSelf: true };
      return known ? { ...known, isSelf: false } : null; // otherThanSelf keeps this node out of `known`
    },
    async refreshLeader() {
      if (state === 'standby') known = await lock.holder().then(otherThanSelf, () => known);
      return this.leader();
    },
    async start() {
      if (state !== 'stopped') return;
      const gen = ++run;
      state = 'standby';
      holdUntil = 0;
      await tick(gen);
      // A node that won the first attempt is active before unseal returns.
      await chain;
      schedule(gen);
    },
    async stop() {
      run++;
      if (timer) clearTimeout(timer);
      timer = null;
      await serial(async () => {
        if (state === 'stopped') return;
        await becomeStandby('sealed or shutting down', true);
        state = 'stopped';
        known = null;
      });
    },
    async stepDown() {
      await serial(async () => {
        if (state !== 'active' && state !== 'activating') return;
        holdUntil = Date.now() + timings.stepDownHoldMs;
        await becomeStandby('step-down requested', true);
      });
    },
  };
}
