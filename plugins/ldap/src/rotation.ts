/**
 * Password rotation of static roles (at creation, every rotation_period, on
 * rotate-role) and of the bind entry (rotate-root).
 *
 * What must stay true across crashes of this process or of the core:
 *  - no lost password: before the directory is changed the new password is
 *    written to a WAL entry (static-wal/<role>, root-wal); a rotation cut
 *    short is settled at the next start: a static role's WAL password is set
 *    again (idempotent) and committed; the bind password is whichever of the
 *    WAL's and the stored one binds (engine.ts, before the first use);
 *  - no missed and no doubled rotation: the next one is due at
 *    last_rotation + rotation_period, both persisted with the role;
 *  - one rotation of a role at a time (the role's lock `static/<name>`).
 * The tick runs in this process once a second: rotation_period may be 5 s
 * and the core's periodic call comes once a minute.
 */
import type { Engine } from './engine.js';
import { ResultCodeError } from 'ldapts';
import { directoryError } from './directory.js';
import type { StaticRole } from './store.js';

export const TICK_MS = 1_000;
/** After a failed rotation, try again this soon (or at the period, when shorter). */
export const RETRY_MS = 10_000;

export interface Rotation {
  /** Rotates now (creation, rotate-role); throws what the directory said. */
  rotate(name: string, role?: StaticRole): Promise<StaticRole>;
  nextDue(name: string): number | null;
  schedule(role: StaticRole): void;
  unschedule(name: string): void;
  /** Runs due rotations once (the timer calls it; tests may call it). */
  tick(): Promise<void>;
  /** Changes the bind password in the directory; only the engine knows the new one. */
  rotateRoot(): Promise<void>;
  start(): void;
  stop(): void;
}

export function createRotation(engine: Engine): Rotation {
  const { store, mutex, logger } = engine;
  const due = new Map<string, number>();
  let loaded = false;
  let ticking: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;
  const dueAt = (r: StaticRole) => r.last_rotation + r.rotation_period * 1000;

  /** Settles rotations cut short and schedules every role; storage may not answer during setup, so this runs at the first tick. */
  const load = async () => {
    for (const name of await store.staticWals.list()) {
      await rotateIf(name, 'replay').catch((err: unknown) => logger.warn('settling an unfinished static rotation failed; will retry', { role: name, error: String(err) }));
    }
    for (const name of await store.staticRoles.list()) {
      if (due.has(name)) continue;
      const r = await store.staticRoles.get(name);
      if (r) due.set(name, dueAt(r));
    }
    loaded = true;
  };

  /** `demand` rotates now; `replay` and `due` were decided outside the lock, so they re-check under it. */
  const rotateIf = (name: string, why: 'demand' | 'replay' | 'due', given?: StaticRole): Promise<StaticRole> =>
    mutex.run(`static/${name}`, async () => {
      const role = given ?? (await store.staticRoles.get(name));
      if (!role) {
        await store.staticWals.delete(name);
        due.delete(name);
        throw new Error(`static role "${name}" does not exist`);
      }
      const wal = await store.staticWals.get(name);
      if (!wal && (why === 'replay' || (why === 'due' && dueAt(role) > engine.now()))) {
        due.set(name, dueAt(role));
        return role;
      }
      let password = '';
      try {
        // A rotation cut short sets its password again: the directory may hold it already.
        password = wal && wal.dn === role.dn ? wal.password : await engine.newPassword();
        if (!wal || wal.password !== password) await store.staticWals.put(name, { role: name, dn: role.dn, password, started: engine.now() });
        await engine.directory.setPassword(role.dn, password).catch((err: unknown) => {
          throw directoryError(`setting the password of ${role.dn} failed`, err, [password]);
        });
        const next: StaticRole = { ...role, last_password: wal && role.password === password ? role.last_password : role.password, password, last_rotation: engine.now() };
        await store.staticRoles.put(name, next);
        await store.staticWals.delete(name);
        due.set(name, dueAt(next));
        return next;
      } catch (err) {
        if (!given) due.set(name, engine.now() + Math.min(RETRY_MS, role.rotation_period * 1000));
        throw err;
      }
    });

  const runDue = async () => {
    if (!loaded) await load();
    const now = engine.now();
    for (const [name, at] of [...due]) {
      if (at > now) continue;
      await rotateIf(name, 'due').catch((err: unknown) => logger.warn('static role rotation failed; will retry', { role: name, error: String(err) }));
    }
  };

  const api: Rotation = {
    rotate: (name, role) => rotateIf(name, 'demand', role),
    nextDue: (name) => due.get(name) ?? null,
    schedule: (role) => void due.set(role.name, dueAt(role)),
    unschedule: (name) => void due.delete(name),
    tick() {
      // Ticks never overlap: a slow directory delays the next one instead of doubling rotations.
      ticking ??= runDue()
        .catch((err: unknown) => logger.warn('static rotation tick failed', { error: String(err) }))
        .finally(() => (ticking = null));
      return ticking;
    },
    rotateRoot: () =>
      mutex.run('config', async () => {
        await engine.settleRoot();
        const cfg = await engine.config();
        const password = await engine.newPassword(cfg);
        await store.rootWal.put({ password, started: engine.now() });
        try {
          // The entry changes its own password over the connection bound with the old one.
          await engine.directory.setPassword(cfg.binddn, password);
        } catch (err) {
          // The server said no: nothing changed. Anything else (a lost reply) may have changed it: settle by binding.
          if (err instanceof ResultCodeError) await store.rootWal.delete();
          else await engine.settleRoot().catch(() => undefined);
          await engine.directory.close();
          if ((await store.config.get())?.bindpass === password) return;
          throw directoryError('rotating the bind password failed', err, [password, cfg.bindpass]);
        }
        await store.config.put({ ...cfg, bindpass: password, last_bind_password_rotation: engine.now() });
        await store.rootWal.delete();
        await engine.directory.close();
      }),
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
