/** The standby guard: writes refused before storage while read-only, and which request tried. */
import { createInmemPhysical } from '../storage/inmem.js';
import { createStandbyGuard } from './standby-guard.js';

const b = (s: string) => Buffer.from(s);

it('refuses every write while read-only (nothing reaches storage) and marks the request that tried', async () => {
  const guard = createStandbyGuard();
  const inner = createInmemPhysical();
  const physical = guard.wrap(inner);
  await physical.put('k', b('1'));
  guard.readOnly = true;
  const read = await guard.attempt(async () => Buffer.from((await physical.get('k'))!).toString());
  expect(read).toEqual({ wrote: false, outcome: { ok: true, value: '1' } });
  for (const write of [() => physical.put('k', b('2')), () => physical.delete('k'), () => physical.batch([{ type: 'put', key: 'x', value: b('x') }])]) {
    const r = await guard.attempt(write);
    expect(r.wrote).toBe(true);
    expect(r.outcome.ok).toBe(false);
  }
  // A request that swallowed the refusal is still marked.
  expect((await guard.attempt(() => physical.put('k', b('3')).catch(() => 'swallowed'))).wrote).toBe(true);
  expect(Buffer.from((await inner.get('k'))!).toString()).toBe('1');
  expect(await inner.get('x')).toBeNull();
  guard.readOnly = false;
  await physical.put('k', b('4'));
  expect(Buffer.from((await inner.get('k'))!).toString()).toBe('4');
});

it('a write refused outside any request (a plugin storage callback) marks the requests in flight, not later ones', async () => {
  const guard = createStandbyGuard();
  const physical = guard.wrap(createInmemPhysical());
  guard.readOnly = true;
  let release!: () => void;
  const inFlight = guard.attempt(() => new Promise<void>((r) => (release = r)));
  // Not inside attempt's async context: as the plugin's storage callback arrives.
  await new Promise<void>((r) => setImmediate(() => void physical.put('p', b('1')).catch(() => r())));
  release();
  expect((await inFlight).wrote).toBe(true);
  expect((await guard.attempt(async () => 'later')).wrote).toBe(false);
});
