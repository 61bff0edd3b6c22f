import { planWrite } from './existence.js';

const allow = (sudo = false) => ({ allowed: true, sudo });
const refuse = (sudo = false) => ({ allowed: false, sudo });

describe('planWrite: when the existence check can change a write’s authorisation', () => {
  it('create and update both allowed alike: either, the engine may pick without asking first', () => {
    expect(planWrite(allow(), allow())).toEqual({ kind: 'either', sudo: false });
    expect(planWrite(allow(true), allow(true))).toEqual({ kind: 'either', sudo: true });
  });

  it('neither allowed: denied without asking the engine', () => {
    expect(planWrite(refuse(), refuse())).toEqual({ kind: 'deny' });
    expect(planWrite(refuse(true), refuse(false))).toEqual({ kind: 'deny' });
  });

  it('only one of the two allowed: the core must ask first', () => {
    expect(planWrite(allow(), refuse())).toEqual({ kind: 'ask' });
    expect(planWrite(refuse(), allow())).toEqual({ kind: 'ask' });
  });

  it('both allowed but sudo differs (a root path could then depend on the answer): ask first', () => {
    expect(planWrite(allow(true), allow(false))).toEqual({ kind: 'ask' });
    expect(planWrite(allow(false), allow(true))).toEqual({ kind: 'ask' });
  });
});
