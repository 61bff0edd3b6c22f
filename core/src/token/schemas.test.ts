import { StrongroomError } from '@strongroom/sdk-plugin/host';
import {
  createTokenSchema,
  parseOrBadRequest,
  renewSchema,
  roleSchema,
  tokenBodySchema,
  toCreateTokenRequest,
  toRoleInput,
} from './schemas.js';

function badFields(fn: () => unknown): string[] {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(StrongroomError);
    expect((e as StrongroomError).status).toBe(400);
    return (e as StrongroomError).details;
  }
  throw new Error('expected a 400');
}

describe('token request schemas', () => {
  it('reads create bodies as CLIs and JSON clients send them', () => {
    const cli = parseOrBadRequest(createTokenSchema, {
      policies: 'a, b',
      ttl: '1h',
      explicit_max_ttl: '2h30m',
      renewable: 'false',
      no_default_policy: 'true',
      num_uses: '3',
      period: '',
      type: '',
      meta: '{"team":"x"}',
      unknown_field: 'ignored',
    });
    expect(toCreateTokenRequest(cli, { orphanEndpoint: true, namespaceId: 'ns1' })).toEqual({
      policies: ['a', 'b'],
      ttl: 3600,
      explicitMaxTtl: 9000,
      renewable: false,
      noDefaultPolicy: true,
      numUses: 3,
      period: 0,
      meta: { team: 'x' },
      orphanEndpoint: true,
      namespaceId: 'ns1',
    });
    const json = parseOrBadRequest(createTokenSchema, { policies: ['a'], lease: 60, no_parent: true, type: 'batch' });
    expect(toCreateTokenRequest(json, { roleName: 'r', callerHasSudo: true })).toEqual({
      policies: ['a'],
      ttl: 60,
      noParent: true,
      type: 'batch',
      roleName: 'r',
      callerHasSudo: true,
    });
  });

  it('names the bad field in a 400', () => {
    expect(badFields(() => parseOrBadRequest(createTokenSchema, { ttl: 'soon' }))[0]).toMatch(/^ttl:/);
    expect(badFields(() => parseOrBadRequest(createTokenSchema, { num_uses: -1 }))[0]).toMatch(/^num_uses:/);
    expect(badFields(() => parseOrBadRequest(createTokenSchema, { type: 'weird' }))[0]).toMatch(/^type:/);
    expect(badFields(() => parseOrBadRequest(createTokenSchema, { renewable: 'maybe' }))[0]).toMatch(/^renewable:/);
    expect(badFields(() => parseOrBadRequest(tokenBodySchema, {}))[0]).toMatch(/^token:/);
    expect(badFields(() => parseOrBadRequest(roleSchema, { path_suffix: '../x' }))[0]).toMatch(/^path_suffix:/);
  });

  it('folds deprecated role fields into their token_* names', () => {
    const body = parseOrBadRequest(roleSchema, {
      allowed_policies: 'a,b',
      period: '1m',
      explicit_max_ttl: 100,
      bound_cidrs: '10.0.0.0/8',
      token_type: 'default-batch',
      orphan: 'true',
    });
    expect(toRoleInput(body)).toEqual({
      allowedPolicies: ['a', 'b'],
      tokenPeriod: 60,
      tokenExplicitMaxTtl: 100,
      tokenBoundCidrs: ['10.0.0.0/8'],
      tokenType: 'default-batch',
      orphan: true,
    });
    expect(parseOrBadRequest(renewSchema, { token: 't', increment: '90s' }).increment).toBe(90);
  });
});
