import type { LogicalResponse } from '@strongroom/sdk-plugin/host';
import { visibleScan } from './scan.js';

/** An engine's scan over `keys`: pages of `limit` after `after`. */
function engine(keys: string[]) {
  const calls: string[] = [];
  const page = (after: string, limit: number): LogicalResponse | null => {
    calls.push(after);
    const rest = keys.filter((k) => k > after);
    const out = limit > 0 ? rest.slice(0, limit) : rest;
    return out.length ? { data: { keys: out } } : null;
  };
  return { calls, page };
}

const keys = Array.from({ length: 30 }, (_, i) => `${i % 3 === 0 ? 'hidden' : 'shown'}/${String(i).padStart(2, '0')}`).sort();

describe('visibleScan', () => {
  it('drops what the caller may not see and fills the page from the engine\'s next pages', async () => {
    const e = engine(keys);
    const visible = async (ks: readonly string[]) => ks.map((k) => k.startsWith('shown/'));
    const shown: string[] = [];
    let after = '';
    for (;;) {
      const r = await visibleScan(e.page(after, 4), { limit: 4, next: async (a) => e.page(a, 4), visible });
      const page = (r?.data?.keys ?? []) as string[];
      shown.push(...page);
      if (page.length < 4) break;
      after = page[page.length - 1] as string;
    }
    expect(shown).toEqual(keys.filter((k) => k.startsWith('shown/')));
  });

  it('answers nothing (a 404, as an empty path) when nothing is visible, keeping warnings', async () => {
    const e = engine(keys);
    expect(await visibleScan(e.page('', 5), { limit: 5, next: async (a) => e.page(a, 5), visible: async (ks) => ks.map(() => false) })).toBeNull();
    expect(await visibleScan({ data: { keys: ['a'] }, warnings: ['w'] }, { limit: 0, next: async () => null, visible: async () => [false] })).toEqual({ warnings: ['w'] });
  });

  it('with no limit filters the one answer and asks for nothing more', async () => {
    const e = engine(keys);
    const r = await visibleScan(e.page('', 0), { limit: 0, next: async (a) => e.page(a, 0), visible: async (ks) => ks.map((k) => k.endsWith('1')) });
    expect(r?.data?.keys).toEqual(keys.filter((k) => k.endsWith('1')));
    expect(e.calls).toEqual(['']);
  });
});
