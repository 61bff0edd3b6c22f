import { z } from 'zod';
import { createMemoryStorage } from '../storage.js';
import { createRecordStore } from './record-store.js';
import { createRotationScheduler, createStaticRoleRotation, type RotationTarget } from './rotation.js';

const Wal = z.object({ user: z.string(), password: z.string() });
type Wal = z.output<typeof Wal>;

/** A fake system with users and passwords, a role record per name, and hooks to fail or hold a change. */
function setup(opts: { settle?: boolean } = {}) {
  const storage = createMemoryStorage();
  const clock = { t: 1_000_000 };
  const system = new Map<string, string>([['svc', 'initial']]);
  const applied: string[] = [];
  let failApply = 0;
  let lostReply = false;
  let n = 0;
  const build = () => {
    const store = createRecordStore(storage);
    const roles = store.kind('role/', z.object({ user: z.string(), password: z.string(), last: z.number(), period: z.number() }));
    const target: RotationTarget<Wal> = {
      wal: store.kind('wal/', Wal, { cache: false }),
      names: () => roles.list(),
      nextDue: async (name) => {
        const r = await roles.get(name);
        return r ? r.last + r.period : null;
      },
      prepare: async (name) => ({ user: (await roles.get(name))!.user, password: `pw-${++n}` }),
      apply: async (_name, e) => {
        if (failApply > 0) {
          failApply--;
          throw new Error('the system said no');
        }
        system.set(e.user, e.password);
        applied.push(e.password);
        if (lostReply) {
          lostReply = false;
          throw new Error('connection reset');
        }
      },
      commit: async (name, e) => [roles.putOp(name, { ...(await roles.get(name))!, password: e.password, last: clock.t })],
    };
    if (opts.settle) target.settle = async (_name, e) => (system.get(e.user) === e.password ? 'applied' : 'not-applied');
    const rot = createRotationScheduler(target, { now: () => clock.t, retryMs: 1000 });
    return { rot, roles, target };
  };
  return {
    storage,
    clock,
    system,
    applied,
    build,
    failNext: (k: number) => (failApply = k),
    loseReply: () => (lostReply = true),
  };
}

describe('rotation scheduler', () => {
  it('writes ahead, applies, commits, and schedules the next rotation', async () => {
    const s = setup();
    const { rot, roles } = s.build();
    await roles.put('r', { user: 'svc', password: 'initial', last: s.clock.t, period: 10_000 });
    await rot.tick();
    expect(s.applied).toEqual([]);
    expect(rot.nextDue('r')).toBe(s.clock.t + 10_000);
    s.clock.t += 10_000;
    await rot.tick();
    expect(s.system.get('svc')).toBe('pw-1');
    expect((await roles.get('r'))!.password).toBe('pw-1');
    expect(await s.storage.get('wal/r')).toBeNull();
    expect(rot.nextDue('r')).toBe(s.clock.t + 10_000);
    await rot.rotate('r');
    expect(s.system.get('svc')).toBe('pw-2');
  });

  it('after a crash between the change and the commit, replays the same secret once', async () => {
    const s = setup();
    const first = s.build();
    await first.roles.put('r', { user: 'svc', password: 'initial', last: s.clock.t, period: 3_600_000 });
    // The crash: the entry was written and the system changed, the role never learned it.
    await first.target.wal.put('r', { user: 'svc', password: 'from-the-wal' });
    s.system.set('svc', 'from-the-wal');
    const restarted = s.build();
    await restarted.rot.tick();
    expect((await restarted.roles.get('r'))!.password).toBe('from-the-wal');
    expect(s.applied).toEqual(['from-the-wal']);
    expect(await s.storage.get('wal/r')).toBeNull();
    await restarted.rot.tick();
    expect(s.applied).toEqual(['from-the-wal']);
  });

  it('retries a failed rotation with the secret it wrote ahead, with backoff', async () => {
    const s = setup();
    const { rot, roles } = s.build();
    await roles.put('r', { user: 'svc', password: 'initial', last: s.clock.t - 20_000, period: 10_000 });
    s.failNext(2);
    await rot.tick();
    expect(s.system.get('svc')).toBe('initial');
    expect(await s.storage.get('wal/r')).not.toBeNull();
    expect(rot.nextDue('r')).toBe(s.clock.t + 1000);
    s.clock.t += 1000;
    await rot.tick();
    expect(rot.nextDue('r')).toBe(s.clock.t + 2000); // doubled
    s.clock.t += 2000;
    await rot.tick();
    expect(s.applied).toEqual(['pw-1']); // the one written ahead, not a new one per attempt
    expect((await roles.get('r'))!.password).toBe('pw-1');
  });

  it('never waits longer than a period to retry', async () => {
    const s = setup();
    const { rot, roles, target } = s.build();
    target.period = async () => 1500;
    const slow = createRotationScheduler(target, { now: () => s.clock.t, retryMs: 10_000 });
    await roles.put('r', { user: 'svc', password: 'initial', last: s.clock.t - 20_000, period: 10_000 });
    s.failNext(1);
    await slow.tick();
    expect(slow.nextDue('r')).toBe(s.clock.t + 1500);
    void rot;
  });

  it('with settle: a lost reply is committed when the system has the new secret; a cut-short one is dropped when it does not', async () => {
    const s = setup({ settle: true });
    const { rot, roles, target } = s.build();
    await roles.put('r', { user: 'svc', password: 'initial', last: s.clock.t, period: 3_600_000 });
    s.loseReply();
    await rot.rotate('r');
    expect((await roles.get('r'))!.password).toBe('pw-1');
    expect(await s.storage.get('wal/r')).toBeNull();

    await target.wal.put('r', { user: 'svc', password: 'never-set' });
    expect(await rot.settle('r')).toBe('not-applied');
    expect((await roles.get('r'))!.password).toBe('pw-1');
    expect(await s.storage.get('wal/r')).toBeNull();
    expect(await rot.settle('r')).toBe('none');
  });

  it('one rotation of a name at a time: a due tick waiting behind an on-demand rotation does not rotate again', async () => {
    const s = setup();
    const { rot, roles } = s.build();
    await roles.put('r', { user: 'svc', password: 'initial', last: s.clock.t - 20_000, period: 10_000 });
    await Promise.all([rot.rotate('r'), rot.tick()]);
    expect(s.applied).toEqual(['pw-1']);
  });

  it('started, it loads the schedule by itself (retrying while storage does not answer) and rotates what is due', async () => {
    const s = setup();
    const { roles, target } = s.build();
    await roles.put('r', { user: 'svc', password: 'initial', last: s.clock.t - 20_000, period: 10_000 });
    let fails = 1;
    const names = target.names;
    target.names = async () => {
      if (fails-- > 0) throw new Error('storage not ready');
      return names();
    };
    const rot = createRotationScheduler(target, { now: () => s.clock.t });
    rot.start();
    const deadline = Date.now() + 5000;
    while (s.applied.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    rot.stop();
    expect(s.applied).toEqual(['pw-1']);
  });

  it('does not retry a name that is not scheduled', async () => {
    const s = setup();
    const { rot } = s.build();
    await expect(rot.rotate('ghost')).rejects.toThrow();
    expect(rot.nextDue('ghost')).toBeUndefined();
  });

  it('static roles: a created role is stored only once its first rotation committed; a failed creation leaves nothing', async () => {
    const store = createRecordStore(createMemoryStorage());
    const roles = store.kind('static-role/', z.object({ name: z.string(), user: z.string(), password: z.string(), rotation_period: z.number(), last_rotation: z.number() }));
    const wal = store.kind('static-wal/', Wal, { cache: false });
    const system = new Map<string, string>();
    let fail = false;
    let seenDuringCreate: string | null = null;
    let t = 5_000;
    const rot = createStaticRoleRotation(
      roles,
      (roleOf) => ({
        wal,
        prepare: async (name) => ({ user: (await roleOf(name))!.user, password: `pw-${t}` }),
        apply: async (name, e) => {
          seenDuringCreate = (await roles.get(name))?.password ?? null;
          if (fail) throw new Error('the system said no');
          system.set(e.user, e.password);
        },
        commit: async (name, e) => [roles.putOp(name, { ...(await roleOf(name))!, password: e.password, last_rotation: t })],
      }),
      { now: () => t },
    );
    await rot.create({ name: 'r', user: 'svc', password: '', rotation_period: 60, last_rotation: 0 });
    expect(seenDuringCreate).toBeNull();
    expect(await roles.get('r')).toMatchObject({ password: 'pw-5000', last_rotation: 5000 });
    expect(system.get('svc')).toBe('pw-5000');
    expect(rot.nextDue('r')).toBe(65_000);
    t = 35_000;
    expect(rot.ttl((await roles.get('r'))!)).toBe(30);
    fail = true;
    await expect(rot.create({ name: 'bad', user: 'other', password: '', rotation_period: 60, last_rotation: 0 })).rejects.toThrow('said no');
    expect(await roles.get('bad')).toBeNull();
    expect(await wal.list()).toEqual([]);
    expect(rot.nextDue('bad')).toBeUndefined();
    rot.stop();
  });
});

