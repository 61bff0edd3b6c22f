import { createAcl, compareGlobPriority, type AclOperation } from './acl.js';
import { createAclCache } from './acl-cache.js';
import { builtinDefaultPolicy, parsePolicy, ROOT_POLICY, type Policy } from './policy.js';

const P = (name: string, ...rules: Array<[string, string[]]>): Policy =>
  parsePolicy(name, rules.map(([path, caps]) => `path "${path}" { capabilities = ${JSON.stringify(caps)} }`).join('\n'));

describe('createAcl: matching and priority', () => {
  // (policies, op, path) -> allowed
  const cases: Array<[string, Policy[], AclOperation, string, boolean]> = [
    ['exact match', [P('a', ['secret/foo', ['read']])], 'read', 'secret/foo', true],
    ['no rule means denied', [P('a', ['secret/foo', ['read']])], 'read', 'secret/bar', false],
    ['exact is not a prefix', [P('a', ['secret/foo', ['read']])], 'read', 'secret/foobar', false],
    ['missing capability', [P('a', ['secret/foo', ['read']])], 'update', 'secret/foo', false],
    ['leading slash ignored', [P('a', ['/secret/foo', ['read']])], 'read', '/secret/foo', true],
    ['star is a prefix glob', [P('a', ['secret/*', ['read']])], 'read', 'secret/a/b/c', true],
    ['star prefix mid-segment', [P('a', ['secret/fo*', ['read']])], 'read', 'secret/foo/bar', true],
    ['star does not match the bare parent', [P('a', ['secret/*', ['read']])], 'read', 'secret', false],
    ['lone star matches everything', [P('a', ['*', ['read']])], 'read', 'anything/at/all', true],
    ['exact beats glob', [P('a', ['secret/*', ['read']], ['secret/foo', ['update']])], 'read', 'secret/foo', false],
    ['longer prefix wins (no merging of patterns)', [P('a', ['secret/*', ['read']], ['secret/foo/*', ['list']])], 'read', 'secret/foo/x', false],
    ['longer prefix wins, its caps apply', [P('a', ['secret/*', ['read']], ['secret/foo/*', ['list']])], 'list', 'secret/foo/x', true],
    ['plus matches one segment', [P('a', ['secret/+/config', ['read']])], 'read', 'secret/abc/config', true],
    ['plus does not match two segments', [P('a', ['secret/+/config', ['read']])], 'read', 'secret/a/b/config', false],
    ['plus needs the segment count', [P('a', ['secret/+', ['read']])], 'read', 'secret/a/b', false],
    ['plus then star', [P('a', ['secret/+/*', ['read']])], 'read', 'secret/a/b/c', true],
    ['plus then star needs the slash', [P('a', ['secret/+/*', ['read']])], 'read', 'secret/a', false],
    ['plus as first segment', [P('a', ['+/config', ['read']])], 'read', 'kv/config', true],
    ['plus in the middle of a word is literal', [P('a', ['secret/a+b', ['read']])], 'read', 'secret/a+b', true],
    ['plus in a word does not glob', [P('a', ['secret/a+b', ['read']])], 'read', 'secret/axb', false],
    // first wildcard later wins: "secret/foo/+" (wildcard at 11) over "secret/+/bar" (at 7)
    ['later first wildcard wins', [P('a', ['secret/+/bar', ['read']], ['secret/foo/+', ['list']])], 'read', 'secret/foo/bar', false],
    ['later first wildcard wins (list)', [P('a', ['secret/+/bar', ['read']], ['secret/foo/+', ['list']])], 'list', 'secret/foo/bar', true],
    // same first wildcard: no trailing star wins
    ['no trailing star beats star', [P('a', ['secret/+/x*', ['read']], ['secret/+/xyz', ['list']])], 'read', 'secret/a/xyz', false],
    // "secret/*" (wildcard at 7) vs "secret/+/bar" (at 7, no trailing star) -> the + pattern wins
    ['plus without star beats star at the same position', [P('a', ['secret/*', ['read']], ['secret/+/bar', ['list']])], 'read', 'secret/a/bar', false],
    ['star still applies where plus does not match', [P('a', ['secret/*', ['read']], ['secret/+/bar', ['list']])], 'read', 'secret/a/baz', true],
    // fewer + wins at the same first wildcard and no star
    ['fewer plus wins', [P('a', ['a/+/+', ['read']], ['a/+/c', ['list']])], 'read', 'a/b/c', false],
    ['fewer plus wins (its cap)', [P('a', ['a/+/+', ['read']], ['a/+/c', ['list']])], 'list', 'a/b/c', true],
    // same position, both star, same plus count: longer wins
    ['longer wins', [P('a', ['a/+/b*', ['read']], ['a/+/bc*', ['list']])], 'read', 'a/x/bcd', false],
    // prefix (star at 3) vs plus (at 2): prefix wins
    ['prefix with a later wildcard beats plus', [P('a', ['a/b*', ['read']], ['a/+', ['list']])], 'read', 'a/bc', true],
    ['merge across policies', [P('a', ['secret/*', ['read']]), P('b', ['secret/*', ['update']])], 'update', 'secret/x', true],
    ['merge across policies (read kept)', [P('a', ['secret/*', ['read']]), P('b', ['secret/*', ['update']])], 'read', 'secret/x', true],
    ['deny wins across policies', [P('a', ['secret/*', ['read', 'update']]), P('b', ['secret/*', ['deny']])], 'read', 'secret/x', false],
    ['deny on an exact path', [P('a', ['secret/*', ['read']]), P('b', ['secret/admin', ['deny']])], 'read', 'secret/admin', false],
    ['deny on exact does not leak to siblings', [P('a', ['secret/*', ['read']]), P('b', ['secret/admin', ['deny']])], 'read', 'secret/other', true],
    ['different patterns are not merged across policies', [P('a', ['secret/*', ['read']]), P('b', ['secret/x/*', ['list']])], 'read', 'secret/x/y', false],
    ['list of a dir falls back to the exact rule without slash', [P('a', ['secret/dir', ['list']])], 'list', 'secret/dir/', true],
    ['read does not get that fallback', [P('a', ['secret/dir', ['read']])], 'read', 'secret/dir/', false],
    ['scan needs the scan capability: list implies nothing about it', [P('a', ['secret/*', ['read', 'list']])], 'scan', 'secret/dir/', false],
    ['scan with the scan capability', [P('a', ['secret/*', ['scan']])], 'scan', 'secret/dir/', true],
    ['scan of a dir falls back to the exact rule without slash', [P('a', ['secret/dir', ['scan']])], 'scan', 'secret/dir/', true],
    ['scan grants no list', [P('a', ['secret/*', ['scan']])], 'list', 'secret/dir/', false],
    ['sudo-check needs sudo', [P('a', ['sys/leases/lookup/*', ['list']])], 'sudo-check', 'sys/leases/lookup/x', false],
    ['sudo-check with sudo', [P('a', ['sys/leases/lookup/*', ['list', 'sudo']])], 'sudo-check', 'sys/leases/lookup/x', true],
    ['renew is an update', [P('a', ['sys/leases/renew', ['update']])], 'renew', 'sys/leases/renew', true],
    ['root allows everything', [ROOT_POLICY], 'delete', 'sys/anything', true],
    ['root with others still allows', [P('a', ['x', ['deny']]), ROOT_POLICY], 'read', 'x', true],
    ['no policies', [], 'read', 'secret/x', false],
    ['default policy: lookup-self', [builtinDefaultPolicy()], 'read', 'auth/token/lookup-self', true],
    ['default policy: cubbyhole', [builtinDefaultPolicy()], 'create', 'cubbyhole/mine', true],
    ['default policy: not secret', [builtinDefaultPolicy()], 'read', 'secret/data/x', false],
  ];

  it.each(cases)('%s', (_name, policies, op, path, allowed) => {
    expect(createAcl(policies).check(op, path).allowed).toBe(allowed);
  });

  it('gives the same answer whatever the rule order (exactly one winner)', () => {
    const rules: Array<[string, string[]]> = [
      ['secret/*', ['read']],
      ['secret/+/bar', ['list']],
      ['secret/foo/+', ['update']],
      ['secret/foo/b*', ['delete']],
      ['secret/+/+', ['create']],
    ];
    const winners = new Set<string | null>();
    for (let i = 0; i < rules.length; i++) {
      const rotated = [...rules.slice(i), ...rules.slice(0, i)];
      winners.add(createAcl([P('a', ...rotated)]).check('read', 'secret/foo/bar').matchedPattern);
      winners.add(createAcl([P('a', ...rotated.reverse())]).check('read', 'secret/foo/bar').matchedPattern);
    }
    // "secret/foo/b*" has its first wildcard latest (index 12).
    expect([...winners]).toEqual(['secret/foo/b*']);
  });

  it('reports sudo, the matched pattern and the refusal reason', () => {
    const acl = createAcl([P('a', ['sys/leases/revoke-prefix/*', ['update', 'sudo']], ['secret/*', ['deny']])]);
    expect(acl.check('update', 'sys/leases/revoke-prefix/aws')).toEqual({
      allowed: true,
      sudo: true,
      matchedPattern: 'sys/leases/revoke-prefix/*',
    });
    expect(acl.check('read', 'secret/x')).toMatchObject({ allowed: false, reason: 'denied', matchedPattern: 'secret/*' });
    expect(acl.check('read', 'nope')).toMatchObject({ allowed: false, reason: 'no_matching_rule', matchedPattern: null });
    expect(acl.check('read', 'sys/leases/revoke-prefix/aws')).toMatchObject({ allowed: false, sudo: true, reason: 'missing_capability' });
  });

  it('answers capabilities like sys/capabilities-self', () => {
    const acl = createAcl([P('a', ['secret/*', ['update', 'read']], ['secret/no', ['deny']], ['empty', []]), P('b', ['secret/*', ['list']])]);
    expect(acl.capabilities('secret/x')).toEqual(['read', 'update', 'list']);
    expect(acl.capabilities('secret/no')).toEqual(['deny']);
    expect(acl.capabilities('elsewhere')).toEqual(['deny']);
    expect(acl.capabilities('empty')).toEqual(['deny']);
    expect(createAcl([ROOT_POLICY]).capabilities('anything')).toEqual(['root']);
  });

  it('merges wrapping TTLs as Vault does: the smaller minimum and the smaller maximum', () => {
    const a = parsePolicy('a', 'path "w" { capabilities = ["read"]\n min_wrapping_ttl = "1m"\n max_wrapping_ttl = "1h" }');
    const b = parsePolicy('b', 'path "w" { capabilities = ["read"]\n min_wrapping_ttl = "5m"\n max_wrapping_ttl = "2h" }');
    const c = parsePolicy('c', 'path "w" { capabilities = ["list"] }');
    expect(createAcl([a, b, c]).check('read', 'w')).toMatchObject({ allowed: true, minWrappingTtl: 60, maxWrappingTtl: 3600 });
    expect(createAcl([c]).check('list', 'w')).not.toHaveProperty('minWrappingTtl');
  });
});

describe('createAcl: parameters', () => {
  const policy = parsePolicy(
    'p',
    `
    path "secret/cfg" {
      capabilities = ["create", "update", "read"]
      allowed_parameters = {
        "mode" = ["fast", "slow*"]
        "tags" = []
        "size" = [1, 2]
      }
      denied_parameters = { "tags" = ["*admin*"] }
      required_parameters = ["mode"]
    }
    path "secret/open" {
      capabilities = ["update"]
      allowed_parameters = { "*" = [] }
      denied_parameters = { "secret" = [] }
    }
    path "secret/locked" {
      capabilities = ["update"]
      denied_parameters = { "*" = [] }
    }
    path "secret/free" { capabilities = ["update"] }
  `,
  );
  const acl = createAcl([policy]);
  const cases: Array<[string, AclOperation, string, Record<string, unknown>, boolean, string | null]> = [
    ['allowed values', 'update', 'secret/cfg', { mode: 'fast', tags: 'x', size: 2 }, true, null],
    ['suffix glob on value', 'update', 'secret/cfg', { mode: 'slowest' }, true, null],
    ['parameter names are case-insensitive', 'update', 'secret/cfg', { MODE: 'fast' }, true, null],
    ['value not allowed', 'update', 'secret/cfg', { mode: 'medium' }, false, 'parameter_not_allowed'],
    ['number not allowed', 'update', 'secret/cfg', { mode: 'fast', size: 3 }, false, 'parameter_not_allowed'],
    ['unknown parameter', 'update', 'secret/cfg', { mode: 'fast', other: 1 }, false, 'parameter_not_allowed'],
    ['denied value glob', 'update', 'secret/cfg', { mode: 'fast', tags: 'superadmin1' }, false, 'denied_parameter'],
    ['list values each checked', 'update', 'secret/cfg', { mode: ['fast', 'slow2'] }, true, null],
    ['list with one bad value', 'update', 'secret/cfg', { mode: ['fast', 'bad'] }, false, 'parameter_not_allowed'],
    ['required missing', 'create', 'secret/cfg', { tags: 'x' }, false, 'missing_required_parameter'],
    ['required is checked on read too', 'read', 'secret/cfg', {}, false, 'missing_required_parameter'],
    ['star allows anything but denied', 'update', 'secret/open', { anything: 1 }, true, null],
    ['denied beats star', 'update', 'secret/open', { secret: 'x' }, false, 'denied_parameter'],
    ['star denies every parameter', 'update', 'secret/locked', { a: 1 }, false, 'denied_parameter'],
    ['star deny with no data', 'update', 'secret/locked', {}, true, null],
    ['no parameter rules', 'update', 'secret/free', { whatever: true }, true, null],
  ];
  it.each(cases)('%s', (_n, op, path, data, allowed, reason) => {
    const res = acl.check(op, path, data);
    expect(res.allowed).toBe(allowed);
    if (reason !== null) expect(res.reason).toBe(reason);
  });

  it('merges parameter lists across policies; an empty list means any value', () => {
    const a = parsePolicy('a', 'path "x" { capabilities = ["update"]\n allowed_parameters = { "k" = ["1"] } }');
    const b = parsePolicy('b', 'path "x" { capabilities = ["update"]\n allowed_parameters = { "k" = ["2"] } }');
    const c = parsePolicy('c', 'path "x" { capabilities = ["update"]\n allowed_parameters = { "k" = [] } }');
    expect(createAcl([a, b]).check('update', 'x', { k: '2' }).allowed).toBe(true);
    expect(createAcl([a, b]).check('update', 'x', { k: '3' }).allowed).toBe(false);
    expect(createAcl([a, c]).check('update', 'x', { k: '3' }).allowed).toBe(true);
  });
});

describe('compareGlobPriority', () => {
  const meta = (pattern: string) => {
    const prefix = pattern.endsWith('*');
    const segs = (prefix ? pattern.slice(0, -1) : pattern).split('/');
    let first = prefix ? pattern.length - 1 : Infinity;
    let offset = 0;
    let plus = 0;
    segs.forEach((s, k) => {
      if (s === '+' && !(prefix && k === segs.length - 1)) {
        plus++;
        first = Math.min(first, offset);
      }
      offset += s.length + 1;
    });
    return { pattern, prefix, firstWildcard: first, plusCount: plus };
  };
  const higherFirst: Array<[string, string]> = [
    ['a/b/+', 'a/+/c'],
    ['a/+/c', 'a/+/c*'],
    ['a/+/c', 'a/+/+'],
    ['a/+/cd*', 'a/+/c*'],
    ['a/+/d*', 'a/+/c*'],
  ];
  it.each(higherFirst)('%s outranks %s', (hi, lo) => {
    expect(compareGlobPriority(meta(hi), meta(lo))).toBeGreaterThan(0);
    expect(compareGlobPriority(meta(lo), meta(hi))).toBeLessThan(0);
  });
});

describe('createAclCache', () => {
  it('returns the same compiled ACL for the same set in any order', () => {
    const cache = createAclCache();
    const a = P('a', ['x', ['read']]);
    const b = P('b', ['y', ['read']]);
    expect(cache.get([a, b])).toBe(cache.get([b, a, b]));
    expect(cache.size).toBe(1);
  });

  it('misses when a policy is rewritten, so no stale ACL is served', () => {
    const cache = createAclCache();
    const before = P('a', ['x', ['read']]);
    expect(cache.get([before]).check('read', 'x').allowed).toBe(true);
    const after = P('a', ['x', ['deny']]);
    expect(cache.get([after]).check('read', 'x').allowed).toBe(false);
  });

  it('evicts the least recently used entry', () => {
    const cache = createAclCache({ maxEntries: 2 });
    const [a, b, c] = [P('a', ['x', ['read']]), P('b', ['x', ['read']]), P('c', ['x', ['read']])];
    const aclA = cache.get([a]);
    cache.get([b]);
    cache.get([a]);
    cache.get([c]);
    expect(cache.size).toBe(2);
    expect(cache.get([a])).toBe(aclA);
    const aclB = cache.get([b]);
    expect(cache.get([b])).toBe(aclB);
  });
});

describe('anyAccessUnder: which mounts sys/internal/ui/mounts shows', () => {
  const cases: Array<[string, Policy[], string, boolean]> = [
    ['a rule on a path below the mount', [P('a', ['secret/data/app', ['read']])], 'secret/', true],
    ['a glob below the mount', [P('a', ['secret/data/*', ['list']])], 'secret/', true],
    ['a glob covering the mount', [P('a', ['sec*', ['read']])], 'secret/', true],
    ['a plus rule reaching below', [P('a', ['+/data/app', ['read']])], 'secret/', true],
    ['a plus rule under the mount', [P('a', ['secret/+/app', ['read']])], 'secret/', true],
    ['a rule on another mount only', [P('a', ['other/*', ['read']])], 'secret/', false],
    ['a mount whose name extends another', [P('a', ['secret-two/*', ['read']])], 'secret/', false],
    ['deny only', [P('a', ['secret/*', ['deny']])], 'secret/', false],
    ['a deny does not hide another grant', [P('a', ['secret/*', ['deny']], ['secret/data/x', ['read']])], 'secret/', true],
    ['nothing at all', [P('a', ['auth/token/lookup-self', ['read']])], 'secret/', false],
  ];
  it.each(cases)('%s', (_name, policies, prefix, expected) => {
    expect(createAcl(policies).anyAccessUnder(prefix)).toBe(expected);
  });
  it('root sees everything', () => {
    expect(createAcl([ROOT_POLICY]).anyAccessUnder('anything/')).toBe(true);
  });
});
