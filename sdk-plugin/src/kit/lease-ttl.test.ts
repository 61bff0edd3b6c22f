import { renewal, renewed, resolve } from './lease-ttl.js';

const system = (d: number, m: number) => {
  const asked: string[] = [];
  return {
    asked,
    defaultLeaseTtl: async () => (asked.push('default'), d),
    maxLeaseTtl: async () => (asked.push('max'), m),
  };
};

describe('lease TTLs', () => {
  it('takes the configured TTLs, else the mount\'s, asking the core only for what is unset', async () => {
    const s = system(3600, 7200);
    expect(await resolve(s, 60, 120)).toEqual({ ttl: 60, maxTtl: 120 });
    expect(s.asked).toEqual([]);
    expect(await resolve(s, 0, 120)).toEqual({ ttl: 120, maxTtl: 120 });
    expect(await resolve(s, 60, 0)).toEqual({ ttl: 60, maxTtl: 7200 });
    expect(await resolve(s, 0, 0)).toEqual({ ttl: 3600, maxTtl: 7200 });
    expect(await resolve(system(3600, 0), 0, 0)).toEqual({ ttl: 3600, maxTtl: 0 });
  });

  it('a renewal grants the increment, else the TTL, never past issue time + max TTL', () => {
    const issued = 1_000_000;
    const ttls = { ttl: 60, maxTtl: 300 };
    expect(renewal({ increment: 0, issueTime: issued }, ttls, issued)).toBe(60);
    expect(renewal({ increment: 100, issueTime: issued }, ttls, issued)).toBe(100);
    expect(renewal({ increment: 1000, issueTime: issued }, ttls, issued + 250_000)).toBe(50);
    expect(renewal({ increment: 10, issueTime: issued }, ttls, issued + 400_000)).toBe(0);
    expect(renewal({ increment: 1000, issueTime: issued }, { ttl: 60, maxTtl: 0 }, issued + 400_000)).toBe(1000);
  });

  it('renewed answers the lease of the same type, renewable, with its internal data', () => {
    const secret = { leaseId: 'm/creds/r/x', secretType: 'creds', internalData: { username: 'u' }, ttl: 60, increment: 0, issueTime: 0, lastRenewalTime: null };
    expect(renewed(secret, { ttl: 60, maxTtl: 100 }, 50_000)).toEqual({
      data: {},
      secret: { type: 'creds', ttl: 50, maxTtl: 100, renewable: true, internalData: { username: 'u' } },
    });
  });
});
