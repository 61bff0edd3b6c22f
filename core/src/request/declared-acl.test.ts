import type { BackendDescription } from '@strongroom/sdk-plugin/host';
import { declaredChecks } from './declared-acl.js';

const desc: BackendDescription = {
  help: '',
  secretTypes: [],
  paths: [
    { pattern: 'data/*path', fields: [], operations: [], existenceCheck: true, synopsis: '', description: '' },
    {
      pattern: 'move/*path',
      fields: [],
      operations: [],
      existenceCheck: false,
      synopsis: '',
      description: '',
      authorize: {
        update: [
          { path: 'metadata/{path}', capability: 'update' },
          { path: 'data/{destination}', capability: 'create' },
          { path: 'data/{destination}', capability: 'update', when: 'overwrite' },
        ],
      },
    },
  ],
};

describe('declaredChecks', () => {
  it('fills captures and body fields; `when` follows the boolean field', () => {
    expect(declaredChecks(desc, 'move/a/b', 'update', { destination: 'c/d' })).toEqual([
      { path: 'metadata/a/b', capability: 'update' },
      { path: 'data/c/d', capability: 'create' },
    ]);
    expect(declaredChecks(desc, 'move/a', 'update', { destination: 'c', overwrite: 'true' })?.map((c) => c.capability)).toEqual(['update', 'create', 'update']);
  });

  it('leaves other paths and operations to the usual check', () => {
    expect(declaredChecks(desc, 'data/a', 'update', {})).toBeNull();
    expect(declaredChecks(desc, 'move/a', 'read', {})).toBeNull();
    expect(declaredChecks(undefined, 'move/a', 'update', {})).toBeNull();
  });

  it('refuses a destination that is not a clean relative path, or a non-boolean `when` (400 naming the field)', () => {
    for (const destination of ['', '../x', 'a//b', '/a', 'a/', './a', 5, undefined]) {
      expect(() => declaredChecks(desc, 'move/a', 'update', { destination })).toThrow(/field "destination"/);
    }
    expect(() => declaredChecks(desc, 'move/a', 'update', { destination: 'b', overwrite: 'maybe' })).toThrow(/field "overwrite"/);
  });
});
