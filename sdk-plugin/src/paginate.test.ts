import { paginate } from './paginate.js';

describe('paginate', () => {
  const keys = ['c', 'a', 'b/', 'd'];
  it('sorts and returns everything by default (limit 0)', () => {
    expect(paginate(keys)).toEqual(['a', 'b/', 'c', 'd']);
  });
  it('starts strictly after `after`, which need not exist', () => {
    expect(paginate(keys, 'b/')).toEqual(['c', 'd']);
    expect(paginate(keys, 'bb')).toEqual(['c', 'd']);
    expect(paginate(keys, 'z')).toEqual([]);
  });
  it('limits', () => {
    expect(paginate(keys, '', 2)).toEqual(['a', 'b/']);
    expect(paginate(keys, 'a', 2)).toEqual(['b/', 'c']);
  });
});
