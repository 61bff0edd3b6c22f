import { issueTtl, renewTtl } from './ttl-policy.js';

const mount = { defaultTtl: 3600, maxTtl: 86_400, fallbackMaxTtl: 32 * 86_400 };

describe('lease TTL policy', () => {
  it('issues the engine TTL, else the mount default, else the max; capped by every max with a warning', () => {
    expect(issueTtl({ ttl: 60, maxTtl: 0 }, mount)).toEqual({ ttl: 60, maxTtl: 86_400, warnings: [] });
    expect(issueTtl({ ttl: 0, maxTtl: 0 }, mount).ttl).toBe(3600);
    expect(issueTtl({ ttl: 0, maxTtl: 0 }, { ...mount, defaultTtl: 0 }).ttl).toBe(86_400);
    expect(issueTtl({ ttl: 0, maxTtl: 0 }, { defaultTtl: 0, maxTtl: 0, fallbackMaxTtl: 100 })).toEqual({ ttl: 100, maxTtl: 100, warnings: [] });
    const capped = issueTtl({ ttl: 500, maxTtl: 120 }, mount);
    expect(capped).toMatchObject({ ttl: 120, maxTtl: 120 });
    expect(capped.warnings.join()).toMatch(/capped/);
  });

  it('renews to what the engine grants, else the increment, else the default; never past issue time + max', () => {
    const lease = { issueTime: 0, maxTtl: 1000 };
    expect(renewTtl(lease, 50, 999, mount, 0).ttl).toBe(50);
    expect(renewTtl(lease, 0, 70, mount, 0).ttl).toBe(70);
    expect(renewTtl(lease, 0, 0, { ...mount, defaultTtl: 30 }, 0).ttl).toBe(30);
    const late = renewTtl(lease, 0, 500, mount, 900_000);
    expect(late.ttl).toBe(100);
    expect(late.warnings.join()).toMatch(/capped to 100s/);
    expect(renewTtl(lease, 0, 500, mount, 2_000_000).ttl).toBe(0);
    // A mount tuned down since issue caps the renewal too.
    expect(renewTtl(lease, 0, 500, { ...mount, maxTtl: 200 }, 0).ttl).toBe(200);
  });
});
