/**
 * A token role reads as Vault's auth/token/roles/:name: its own policy lists,
 * and the token settings rendered by the kit's one view (as every auth
 * method's roles show them), plus Vault's older aliases.
 */
import { tokens } from '@strongroom/sdk-plugin/host';
import { renderRole } from './render.js';
import { defaultRole, mergeRole } from './roles.js';

describe('renderRole', () => {
  it("shows the role's settings as Vault does, the token settings as the auth methods' roles do", () => {
    const role = mergeRole(defaultRole('ci'), { allowedPolicies: ['deploy'], tokenTtl: 600, tokenMaxTtl: 3600, tokenBoundCidrs: ['10.0.0.0/8'], tokenExplicitMaxTtl: 7200, tokenPeriod: 0, tokenNumUses: 3 });
    const data = renderRole(role);
    expect(data).toEqual({
      name: 'ci',
      allowed_policies: ['deploy'],
      disallowed_policies: [],
      allowed_policies_glob: [],
      disallowed_policies_glob: [],
      allowed_entity_aliases: [],
      orphan: false,
      renewable: true,
      path_suffix: '',
      token_type: 'default-service',
      token_ttl: 600,
      token_max_ttl: 3600,
      token_bound_cidrs: ['10.0.0.0/8'],
      bound_cidrs: ['10.0.0.0/8'],
      token_explicit_max_ttl: 7200,
      explicit_max_ttl: 7200,
      token_no_default_policy: false,
      token_num_uses: 3,
      token_period: 0,
      period: 0,
    });
    const { token_policies: _, policies: __, ...limits } = tokens.view({ ...tokens.defaults(), token_ttl: 600, token_max_ttl: 3600, token_bound_cidrs: ['10.0.0.0/8'], token_explicit_max_ttl: 7200, token_num_uses: 3, token_type: 'default-service' });
    expect(data).toMatchObject(limits);
  });
});
