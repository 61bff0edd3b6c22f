import { errorOf } from '@strongroom/sdk-plugin/host';
import {
  assertPolicyDeletable,
  assertPolicyWritable,
  builtinDefaultPolicy,
  normalizePolicyName,
  parsePolicy,
} from './policy.js';

describe('parsePolicy', () => {
  it('parses HCL and JSON into the same rules', () => {
    const hcl = parsePolicy(
      'Ops',
      `
      path "secret/*" {
        capabilities = ["read", "list"]
      }
      path "/sys/mounts" {
        capabilities = ["sudo", "READ"]
        allowed_parameters = {
          "Type" = ["kv", "transit"]
          "*"    = []
        }
        denied_parameters = { "local" = [] }
        required_parameters = ["type"]
        min_wrapping_ttl = "1m"
        max_wrapping_ttl = 3600
      }`,
    );
    const json = parsePolicy(
      'ops',
      JSON.stringify({
        path: {
          'secret/*': { capabilities: ['read', 'list'] },
          '/sys/mounts': {
            capabilities: ['sudo', 'READ'],
            allowed_parameters: { Type: ['kv', 'transit'], '*': [] },
            denied_parameters: { local: [] },
            required_parameters: ['type'],
            min_wrapping_ttl: '1m',
            max_wrapping_ttl: 3600,
          },
        },
      }),
    );
    expect(hcl.name).toBe('ops');
    expect(hcl.rules).toEqual(json.rules);
    expect(hcl.rules).toEqual([
      { path: 'secret/*', capabilities: ['read', 'list'] },
      {
        path: 'sys/mounts',
        capabilities: ['read', 'sudo'],
        allowedParameters: { type: ['kv', 'transit'], '*': [] },
        deniedParameters: { local: [] },
        requiredParameters: ['type'],
        minWrappingTtl: 60,
        maxWrappingTtl: 3600,
      },
    ]);
  });

  it('keeps repeated blocks for one path as separate rules (merged by the ACL)', () => {
    const p = parsePolicy('x', 'path "a" { capabilities = ["read"] }\npath "a" { capabilities = ["list"] }');
    expect(p.rules).toEqual([
      { path: 'a', capabilities: ['read'] },
      { path: 'a', capabilities: ['list'] },
    ]);
  });

  it('reduces a rule with deny to deny only, and maps the legacy policy key', () => {
    const p = parsePolicy(
      'x',
      'path "a" { capabilities = ["read", "deny"] }\npath "b" { policy = "write" }\npath "c" { policy = "read" }',
    );
    expect(p.rules.map((r) => r.capabilities)).toEqual([
      ['deny'],
      ['create', 'read', 'update', 'patch', 'delete', 'list'],
      ['read', 'list'],
    ]);
  });

  it('gives a different fingerprint when the text changes', () => {
    const a = parsePolicy('x', 'path "a" { capabilities = ["read"] }');
    const b = parsePolicy('x', 'path "a" { capabilities = ["list"] }');
    expect(a.fingerprint).not.toBe(b.fingerprint);
    expect(parsePolicy('x', a.text).fingerprint).toBe(a.fingerprint);
  });

  const bad: Array<[string, string, string, RegExp]> = [
    ['unknown capability', 'p', 'path "a" { capabilities = ["read", "frobnicate"] }', /path "a": capabilities: unknown capability "frobnicate"/],
    ['capabilities not a list', 'p', 'path "a" { capabilities = "read" }', /path "a": capabilities:/],
    ['unknown path key', 'p', 'path "a" { capability = ["read"] }', /path "a": unknown key "capability"/],
    ['unknown top-level key', 'p', 'paths "a" { capabilities = ["read"] }', /unknown top-level key "paths"/],
    ['star in the middle', 'p', 'path "secret/*/x" { capabilities = ["read"] }', /path "secret\/\*\/x": "\*" is only allowed at the end/],
    ['plus star', 'p', 'path "secret/+*" { capabilities = ["read"] }', /"\+\*" is not allowed/],
    ['bad legacy policy', 'p', 'path "a" { policy = "admin" }', /policy: unknown value "admin"/],
    ['bad wrapping ttl', 'p', 'path "a" { min_wrapping_ttl = "soon" }', /min_wrapping_ttl: invalid duration/],
    ['min above max', 'p', 'path "a" { min_wrapping_ttl = "2h"\n max_wrapping_ttl = "1h" }', /max_wrapping_ttl must not be less/],
    ['syntax error with position', 'p', 'path "a" {\n  capabilities = [read]\n}', /line 2, column 19/],
    ['path as attribute', 'p', 'path = "a"', /path: expected blocks/],
    ['empty document', 'p', '  \n', /must not be empty/],
    ['root is not writable', 'Root', 'path "a" { capabilities = ["read"] }', /cannot update the "root" policy/],
    ['bad name', 'a b', 'path "a" { capabilities = ["read"] }', /^name:/],
  ];
  it.each(bad)('refuses %s with a 400 naming the field', (_n, name, text, message) => {
    const err = errorOf(() => parsePolicy(name, text));
    expect(err.status).toBe(400);
    expect(err.message).toMatch(message);
  });
});

describe('policy names', () => {
  it('lower-cases names', () => {
    expect(normalizePolicyName('  Dev-Team ')).toBe('dev-team');
  });
  it('protects root from writes and root/default from deletes', () => {
    expect(errorOf(() => assertPolicyWritable('ROOT')).status).toBe(400);
    expect(() => assertPolicyWritable('default')).not.toThrow();
    expect(errorOf(() => assertPolicyDeletable('root')).message).toMatch(/root/);
    expect(errorOf(() => assertPolicyDeletable('Default')).message).toMatch(/default/);
    expect(() => assertPolicyDeletable('ops')).not.toThrow();
  });
});

describe('built-in default policy', () => {
  it('parses and grants the self-management paths only', () => {
    const p = builtinDefaultPolicy();
    expect(p.name).toBe('default');
    const paths = p.rules.map((r) => r.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'auth/token/lookup-self',
        'auth/token/renew-self',
        'auth/token/revoke-self',
        'sys/capabilities-self',
        'sys/internal/ui/resultant-acl',
        'sys/leases/lookup',
        'sys/leases/renew',
        'sys/tools/hash',
        'sys/wrapping/unwrap',
        'cubbyhole/*',
      ]),
    );
    expect(p.rules.some((r) => r.capabilities.includes('sudo'))).toBe(false);
  });
});
