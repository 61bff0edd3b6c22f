/**
 * Static role rotation: at creation, every rotation_period, and on demand.
 *
 * What must stay true across crashes and restarts (of the core or of this
 * process):
 *  - no missed rotation: the next one is due at last_rotation +
 *    rotation_period, both persisted with the role, so whatever came due
 *    while nothing ran is rotated at the first tick after start;
 *  - no doubled rotation: a role not yet due is left alone at start;
 *  - no lost password: before the database is changed the new password is
 *    written to a WAL entry (static-wal/<role>); after a crash between the
 *    database change and the role update, the WAL's password is set again
 *    (idempotent) and committed, and a failed rotation retries with it;
 *  - one rotation of a role at a time (the per-role lock `static/<name>`).
 * The tick runs inside this process, once a second, because the core's
 * periodic call comes once a minute and rotation_period may be 5 s.
 */
import type { EngineDeps } from './deps.js';
import { newPassword } from './credentials.js';
import type { StaticRole } from './store.js';

export const TICK_MS = 1_000;
/** After a failed rotation, try again this soon (or at the period, when shorter). */
export const RETRY_MS = 10_000;

export interface StaticRotation {
  /** Rotates now (creation, rotate-role); throws what the database said. */
  rotate(name: string, role?: StaticRole): Promise<StaticRole>;
  /** When a role is next due (unix ms), or null when not scheduled. */
  nextDue(name: string): number | null;
  schedule(role: StaticRole): void;
  unschedule(name: string): void;
  /** Runs due rotations once (the timer calls it; tests call it with their clock). */
  tick(): Promise<void>;
  start(): void;
  stop(): void;
}

export function createStaticRotation(deps: Omit<EngineDeps, 'rotation' | 'rootRotation'>): StaticRotation {
  const due = new Map<string, number>();
  let loaded = false;
  let ticking: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;

  /** Replays unfinished rotations and schedules every role; storage may not answer during setup, so this runs at the first tick. */
  const load = async () => {
    for (const name of await deps.store.listWals()) {
      await rotateIf(name, 'replay').catch((err: unknown) => deps.logger.warn('replaying an unfinished static rotation failed; will retry', { role: name, error: String(err) }));
    }
    for (const name of await deps.store.listStaticRoles()) {
      if (due.has(name)) continue;
      const r = await deps.store.getStaticRole(name);
      if (r) due.set(name, r.last_rotation + r.rotation_period * 1000);
    }
    loaded = true;
  };

  /**
   * `demand`: rotate now (creation, rotate-role). `replay` and `due` were
   * decided before taking the role's lock, so they re-check under it: a
   * creation or rotate-role that held the lock meanwhile may have done the
   * work already, and rotating again would change a password just handed out.
   */
  const rotateIf = (name: string, why: 'demand' | 'replay' | 'due', given?: StaticRole): Promise<StaticRole> =>
    deps.mutex.run(`static/${name}`, async () => {
      const role = given ?? (await deps.store.getStaticRole(name));
      if (!role) {
        await deps.store.deleteWal(name);
        due.delete(name);
        throw new Error(`static role "${name}" does not exist`);
      }
      // An unfinished rotation's password is set again rather than a new one: the database may already have it.
      const wal = await deps.store.getWal(name);
      const nextAt = role.last_rotation + role.rotation_period * 1000;
      if (!wal && (why === 'replay' || (why === 'due' && nextAt > deps.now()))) {
        due.set(name, nextAt);
        return role;
      }
      try {
        const cfg = await deps.store.getConfig(role.db_name);
        if (!cfg) throw new Error(`connection "${role.db_name}" does not exist`);
        const password = wal && wal.username === role.username ? wal.password : await newPassword(deps.system, cfg, role.credential_config);
        if (!wal || wal.password !== password) await deps.store.putWal({ role: name, username: role.username, password, started: deps.now() });
        await deps.connections.use(cfg.name, (client) =>
          client.updateUser({
            username: role.username,
            credentialType: 'password',
            password: { newPassword: password, statements: { commands: role.rotation_statements } },
          }),
        );
        const next: StaticRole = { ...role, password, last_rotation: deps.now() };
        await deps.store.putStaticRole(next);
        await deps.store.deleteWal(name);
        due.set(name, next.last_rotation + next.rotation_period * 1000);
        return next;
      } catch (err) {
        if (!given) due.set(name, deps.now() + Math.min(RETRY_MS, role.rotation_period * 1000));
        throw err;
      }
    });

  const runDue = async () => {
    if (!loaded) await load();
    const now = deps.now();
    for (const [name, at] of [...due]) {
      if (at > now) continue;
      await rotateIf(name, 'due').catch((err: unknown) => deps.logger.warn('static role rotation failed; will retry', { role: name, error: String(err) }));
    }
  };

  const api: StaticRotation = {
    rotate: (name, role) => rotateIf(name, 'demand', role),
    nextDue: (name) => due.get(name) ?? null,
    schedule: (role) => void due.set(role.name, role.last_rotation + role.rotation_period * 1000),
    unschedule: (name) => void due.delete(name),
    tick() {
      // Ticks never overlap: a slow database delays the next one instead of doubling rotations.
      ticking ??= runDue()
        .catch((err: unknown) => deps.logger.warn('static rotation tick failed', { error: String(err) }))
        .finally(() => (ticking = null));
      return ticking;
    },
    start() {
      if (timer) return;
      timer = setInterval(() => void api.tick(), TICK_MS);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
  return api;
}
