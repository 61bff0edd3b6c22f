/**
 * Crash-safe credential rotation (database static roles and root
 * credentials, LDAP static roles and rotate-root): the engine says how to
 * rotate one name (`RotationTarget`), the kit runs it with the guarantees
 * below. What must stay true across crashes and restarts of the core or of
 * the plugin process:
 *  - no lost secret: before the external system is changed, the new secret is
 *    written to a write-ahead entry (the target's `wal` record kind); it is
 *    deleted only once the engine stored the result (`commit`). An entry
 *    found later means a rotation was cut short: it is replayed with the SAME
 *    secret (`apply` is idempotent), or, when the target can tell
 *    (`settle`), committed or dropped according to what the system has;
 *  - no missed rotation: the next one is due at the time the target says
 *    (persisted with its record), so whatever came due while nothing ran is
 *    rotated at the first tick after start;
 *  - no doubled rotation: a name that is not due is left alone at start, and
 *    a due rotation re-checks under the lock (an on-demand one may have just
 *    done the work);
 *  - one rotation of a name at a time (the per-name lock `rotate/<name>`);
 *  - a failed scheduled rotation is retried with backoff (10 s, doubling,
 *    at most an hour apart, both options, and never more than a period).
 */
import { definePath, type PathDef } from '../define-backend.js';
import { notFound } from '../errors.js';
import { f } from '../fields.js';
import type { Logger } from '../system-view.js';
import type { Clock } from './clock.js';
import { createDueScheduler } from './due-scheduler.js';
import { createKeyedMutex, type KeyedMutex } from './keyed-mutex.js';
import type { Records } from './record-store.js';
import type { StorageOp } from '../storage.js';

/** What an engine implements for the names it rotates. `W` is its write-ahead entry (the new secret and what it applies to). */
export interface RotationTarget<W> {
  /** Where write-ahead entries are kept: a record kind created with `{ cache: false }`, keyed by the rotated name. */
  wal: Records<W>;
  /** Every name rotated on a schedule (read at the first tick). */
  names(): Promise<string[]>;
  /** When `name` is next due (unix ms); null when it is not scheduled (gone, or rotated on demand only). */
  nextDue(name: string): Promise<number | null>;
  /** The rotation period of `name` in ms, when it has one: a retry never waits longer than a period. */
  period?(name: string): Promise<number | null>;
  /** The entry of a new rotation of `name` (generates the new secret). Throw when `name` is gone. */
  prepare(name: string): Promise<W>;
  /** Whether an unfinished entry still applies to `name` (same user...); a stale entry is replaced by a new rotation. Default: yes. */
  applies?(name: string, entry: W): Promise<boolean>;
  /** Makes the change in the external system. Idempotent: after a crash it may run again with the same entry. */
  apply(name: string, entry: W): Promise<void>;
  /**
   * The outcome to store (new secret, time of the rotation), as operations of
   * the `wal`'s record store: they are written in one batch with the deletion
   * of the write-ahead entry.
   */
  commit(name: string, entry: W): Promise<StorageOp[]>;
  /**
   * Optional, for changes that cannot be replayed blindly (a root password:
   * the old one may no longer log in): find out whether the system has the
   * entry's secret. 'applied' commits the entry, 'not-applied' drops it;
   * throw when neither can be told (the entry stays). Called for a found
   * entry before anything else, and after a failed `apply`.
   */
  settle?(name: string, entry: W): Promise<'applied' | 'not-applied'>;
}

/** `held: true` when the caller already holds the name's lock (`locked`), so the call does not wait for itself. */
export interface HeldOption {
  held?: boolean;
}

export interface RotationScheduler {
  /** Rotates `name` now (creation, rotate-role, rotate-root); throws what the system said. */
  rotate(name: string, opts?: HeldOption): Promise<void>;
  /** Settles an unfinished rotation of `name`, if any, without starting a new one (replays it when the target has no `settle`). */
  settle(name: string, opts?: HeldOption): Promise<'applied' | 'not-applied' | 'none'>;
  /** Drops an unfinished rotation of `name` without settling (its secret was replaced by hand, or `name` is gone). */
  discard(name: string): Promise<void>;
  /** Re-reads when `name` is next due (after its record changed). */
  reschedule(name: string): Promise<void>;
  unschedule(name: string): void;
  /** When `name` is next due (unix ms), or undefined when not scheduled (or rotating right now). */
  nextDue(name: string): number | undefined;
  /** Runs the due rotations once (the core's periodic call and tests; the timer does the same by itself). */
  tick(): Promise<void>;
  /** Arms the timer (rotations then run when due, without waiting for a tick). */
  start(): void;
  stop(): void;
  /** Runs `fn` holding `name`'s rotation lock (a write of the rotated record). */
  locked<R>(name: string, fn: () => Promise<R>): Promise<R>;
}

export interface RotationOptions {
  logger?: Logger;
  /** Unix ms (tests move it by hand). */
  now?: () => number;
  /** Share the engine's mutex, so its writes of a rotated record take the same lock. */
  mutex?: KeyedMutex;
  /** The lock key of a name (default `rotate/<name>`). */
  lockKey?: (name: string) => string;
  /** First retry delay after a failure (default 10 s); doubles per consecutive failure. */
  retryMs?: number;
  /** Longest retry delay (default 1 h). */
  maxRetryMs?: number;
  /** After each rotation is committed (the engine publishes its change event here). */
  onRotated?(name: string): void | Promise<void>;
}

const RETRY_MS = 10_000;
const MAX_RETRY_MS = 3_600_000;
const LOAD_RETRY_MS = 1_000;

export function createRotationScheduler<W>(target: RotationTarget<W>, opts: RotationOptions = {}): RotationScheduler {
  const now = opts.now ?? (() => Date.now());
  const mutex = opts.mutex ?? createKeyedMutex();
  const log = opts.logger;
  const failures = new Map<string, number>();
  const clock: Clock = {
    now,
    setTimer(fn, ms) {
      const t = setTimeout(fn, ms);
      t.unref();
      return t;
    },
    clearTimer: (h) => clearTimeout(h as NodeJS.Timeout),
  };
  const due = createDueScheduler({
    clock,
    stopped: true,
    onDue: (name) => void rotateIf(name, 'due').catch((err: unknown) => log?.warn('rotation failed; will retry', { name, error: String(err) })),
  });
  let loaded: Promise<void> | null = null;
  let started = false;
  let retry: NodeJS.Timeout | null = null;
  let ticking: Promise<void> | null = null;

  const lockKey = opts.lockKey ?? ((name: string) => `rotate/${name}`);
  const locked = <R>(name: string, fn: () => Promise<R>) => mutex.run(lockKey(name), fn);
  const maybeLocked = <R>(name: string, held: boolean | undefined, fn: () => Promise<R>) => (held ? fn() : locked(name, fn));

  const scheduleFromTarget = async (name: string) => {
    const at = await target.nextDue(name);
    if (at === null) due.cancel(name);
    else due.schedule(name, at);
  };

  /** Stores the outcome and drops the write-ahead entry, atomically. */
  const finish = (name: string, ops: StorageOp[]) => target.wal.batch([...ops, target.wal.deleteOp(name)]);

  /** Settles a found entry; answers whether it is gone (committed or dropped). Caller holds the lock. */
  const settleEntry = async (name: string, entry: W): Promise<'applied' | 'not-applied'> => {
    const outcome = await target.settle!(name, entry);
    await finish(name, outcome === 'applied' ? await target.commit(name, entry) : []);
    return outcome;
  };

  /** Scheduled names are retried with backoff; a name rotated on demand only (nextDue null) is not. */
  const retryLater = async (name: string) => {
    const next = await target.nextDue(name).catch(() => null);
    if (next === null) return;
    const n = (failures.get(name) ?? 0) + 1;
    failures.set(name, n);
    const period = (await target.period?.(name).catch(() => null)) ?? null;
    const delay = Math.min((opts.retryMs ?? RETRY_MS) * 2 ** (n - 1), opts.maxRetryMs ?? MAX_RETRY_MS, period ?? Infinity);
    due.schedule(name, now() + delay);
  };

  /**
   * `demand`: rotate now. `replay` and `due` were decided before taking the
   * lock, so they re-check under it: an on-demand rotation that held the
   * lock meanwhile may have done the work already.
   */
  const rotateIf = (name: string, why: 'demand' | 'replay' | 'due', held?: boolean): Promise<void> =>
    maybeLocked(name, held, async () => {
      let entry = await target.wal.get(name);
      if (entry && target.settle) {
        // Only the system can say whether a cut-short change happened.
        await settleEntry(name, entry);
        entry = null;
        if (why === 'replay') return void (await scheduleFromTarget(name));
      }
      if (!entry && why !== 'demand') {
        const at = await target.nextDue(name);
        if (at === null || at > now()) {
          if (at === null) due.cancel(name);
          else due.schedule(name, at);
          return;
        }
      }
      due.cancel(name);
      try {
        if (entry && target.applies && !(await target.applies(name, entry))) entry = null;
        if (!entry) {
          entry = await target.prepare(name);
          // Written ahead: from here on a crash leaves the secret the system may have.
          await target.wal.put(name, entry);
        }
        try {
          await target.apply(name, entry);
        } catch (err) {
          // The change may have happened all the same (a reply lost): the system says which secret it has.
          const outcome = target.settle ? await settleEntry(name, entry).catch(() => 'unknown' as const) : 'unknown';
          if (outcome !== 'applied') throw err;
          failures.delete(name);
          await opts.onRotated?.(name);
          return void (await scheduleFromTarget(name));
        }
        await finish(name, await target.commit(name, entry));
        failures.delete(name);
        await opts.onRotated?.(name);
        await scheduleFromTarget(name);
      } catch (err) {
        await retryLater(name);
        throw err;
      }
    });

  /** Replays unfinished rotations and schedules every name; storage may not answer during setup, so this runs at the first tick. */
  const load = () =>
    (loaded ??= (async () => {
      for (const name of await target.wal.list()) {
        if (name.endsWith('/')) continue;
        await rotateIf(name, 'replay').catch((err: unknown) => log?.warn('replaying an unfinished rotation failed; will retry', { name, error: String(err) }));
      }
      for (const name of await target.names()) {
        if (due.dueAt(name) === undefined) await scheduleFromTarget(name);
      }
    })().catch((err: unknown) => {
      loaded = null;
      throw err;
    }));

  const runDue = async () => {
    await load();
    const t = now();
    for (const [name, at] of due.entries()) {
      if (at > t) continue;
      await rotateIf(name, 'due').catch((err: unknown) => log?.warn('rotation failed; will retry', { name, error: String(err) }));
    }
  };

  return {
    rotate: (name, o = {}) => rotateIf(name, 'demand', o.held),
    settle: (name, o = {}) =>
      maybeLocked(name, o.held, async () => {
        const entry = await target.wal.get(name);
        if (!entry) return 'none';
        if (!target.settle) {
          await rotateIf(name, 'replay', true);
          return 'applied';
        }
        return settleEntry(name, entry);
      }),
    discard: (name) => target.wal.delete(name),
    reschedule: (name) => scheduleFromTarget(name),
    unschedule: (name) => {
      due.cancel(name);
      failures.delete(name);
    },
    nextDue: (name) => due.dueAt(name),
    tick() {
      // Ticks never overlap: a slow system delays the next one instead of doubling rotations.
      ticking ??= runDue()
        .catch((err: unknown) => log?.warn('rotation tick failed', { error: String(err) }))
        .finally(() => (ticking = null));
      return ticking;
    },
    start() {
      started = true;
      due.start();
      // Storage may not answer while the mount is being set up: try again each second until the schedule is loaded.
      const attempt = () => {
        if (!started) return;
        load().catch(() => {
          retry = setTimeout(attempt, LOAD_RETRY_MS);
          retry.unref();
        });
      };
      attempt();
    },
    stop() {
      started = false;
      if (retry) clearTimeout(retry);
      due.stop();
    },
    locked,
  };
}

/** A static role's record: rotated every `rotation_period` seconds after `last_rotation` (unix ms). */
export interface StaticRoleRecord {
  name: string;
  rotation_period: number;
  last_rotation: number;
}

export interface StaticRoleRotation<R extends StaticRoleRecord> extends RotationScheduler {
  /** The first rotation of a role not stored yet: the role is stored, with its secret, only once it succeeded. */
  create(role: R): Promise<void>;
  /** Seconds until `role` is next rotated (what static-creds answers as `ttl`). */
  ttl(role: R): number;
}

/**
 * Static roles (database, LDAP): the role records at `roles`, each due
 * `rotation_period` after its last rotation. `target` says how to rotate one
 * role; it reads roles through the `roleOf` it is given, which also sees a
 * role being created (not stored until its first rotation commits, so a
 * failed creation leaves neither role nor write-ahead entry).
 */
export function createStaticRoleRotation<R extends StaticRoleRecord, W>(
  roles: Records<R>,
  target: (roleOf: (name: string) => Promise<R | null>) => Omit<RotationTarget<W>, 'names' | 'nextDue' | 'period'>,
  opts: RotationOptions = {},
): StaticRoleRotation<R> {
  const creating = new Map<string, R>();
  const roleOf = async (name: string) => creating.get(name) ?? (await roles.get(name));
  const now = opts.now ?? (() => Date.now());
  const t = target(roleOf);
  const scheduler = createRotationScheduler<W>(
    {
      ...t,
      names: () => roles.list(),
      async nextDue(name) {
        const r = creating.has(name) ? null : await roles.view(name);
        return r ? r.last_rotation + r.rotation_period * 1000 : null;
      },
      async period(name) {
        const r = await roles.view(name);
        return r ? r.rotation_period * 1000 : null;
      },
    },
    opts,
  );
  return {
    ...scheduler,
    async create(role) {
      await scheduler.locked(role.name, async () => {
        creating.set(role.name, role);
        try {
          await scheduler.rotate(role.name, { held: true });
        } catch (err) {
          await t.wal.delete(role.name).catch(() => undefined);
          throw err;
        } finally {
          creating.delete(role.name);
        }
      });
      await scheduler.reschedule(role.name);
    },
    ttl(role) {
      const next = scheduler.nextDue(role.name) ?? role.last_rotation + role.rotation_period * 1000;
      return Math.max(0, Math.round((next - now()) / 1000));
    },
  };
}

/** A static role whose current credentials are read back: a user name and the password last set. */
export interface StaticCredentialRole extends StaticRoleRecord {
  username: string;
  password: string;
}

/**
 * The two paths every engine with static roles serves over its rotation: a
 * read of the role's current credentials (`<credentials>/:<param>`: user
 * name, password, when it was last rotated and how long until the next) and
 * `rotate-role/:<param>` (rotate now; the period starts over). `show` adds
 * what the engine shows beside them (LDAP: the entry's DN, the last password).
 */
export function staticCredentialPaths<R extends StaticCredentialRole>(opts: {
  roles: Pick<Records<R>, 'get'>;
  rotation: Pick<StaticRoleRotation<R>, 'rotate' | 'ttl'>;
  /** The credentials path's first segment: `static-creds` (database), `static-cred` (LDAP). */
  credentials: string;
  /** The role name's capture: `name`, `role_name`. */
  param: string;
  show?: (role: R) => Record<string, unknown>;
}): PathDef[] {
  const { roles, rotation, param } = opts;
  const fields = { [param]: f.string().describe('Static role name') };
  const roleOf = async (data: Record<string, unknown>): Promise<R> => {
    const name = String(data[param]);
    const role = await roles.get(name);
    if (!role) throw notFound(`unknown static role: ${name}`);
    return role;
  };
  return [
    definePath({
      pattern: `${opts.credentials}/:${param}`,
      fields,
      synopsis: 'The current credentials of a static role.',
      operations: {
        read: {
          summary: 'Read the current password and when it rotates next.',
          handler: async (req) => {
            const r = await roleOf(req.data);
            return {
              data: {
                ...opts.show?.(r),
                username: r.username,
                password: r.password,
                last_service_rotation: new Date(r.last_rotation).toISOString(),
                rotation_period: r.rotation_period,
                ttl: rotation.ttl(r),
              },
            };
          },
        },
      },
    }),
    definePath({
      pattern: `rotate-role/:${param}`,
      fields,
      synopsis: "Rotate a static role's password now.",
      operations: {
        update: {
          summary: 'Rotate now; the TTL starts over.',
          handler: async (req) => {
            await rotation.rotate((await roleOf(req.data)).name);
            return null;
          },
        },
      },
    }),
  ];
}
