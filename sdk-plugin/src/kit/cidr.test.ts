import { StrongroomError } from '../errors.js';
import { addressAllowed, buildBlockList, hostCidr, ipAllowed, isSubset, parseCidr, validateCidrs } from './cidr.js';

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return e instanceof StrongroomError ? e : null;
  }
  return null;
};

describe('cidr', () => {
  it('parses blocks and bare addresses of both families', () => {
    expect(parseCidr(' 10.0.0.0/8 ', 'f')).toEqual({ address: '10.0.0.0', prefix: 8, family: 'ipv4' });
    expect(parseCidr('10.1.2.3', 'f')).toEqual({ address: '10.1.2.3', prefix: 32, family: 'ipv4' });
    expect(parseCidr('2001:db8::/32', 'f')).toEqual({ address: '2001:db8::', prefix: 32, family: 'ipv6' });
    expect(parseCidr('::1', 'f').prefix).toBe(128);
  });

  it('refuses malformed blocks with a 400 naming the field', () => {
    for (const bad of ['', 'x', '10.0.0.0/33', '10.0.0.0/-1', '10.0.0.0/8/9', '10.0.0.0/', '10.0.0.0/1e1', '::/129', '300.0.0.0/8']) {
      const e = refusal(() => parseCidr(bad, 'token_bound_cidrs'));
      expect(e?.status).toBe(400);
      expect(e?.message).toContain('"token_bound_cidrs"');
    }
  });

  it('validateCidrs trims, drops empty entries and checks every block', () => {
    expect(validateCidrs([' 10.0.0.0/8', '', '::1 '], 'f')).toEqual(['10.0.0.0/8', '::1']);
    expect(refusal(() => validateCidrs(['10.0.0.0/8', 'nope'], 'cidr_list'))?.message).toContain('"cidr_list"');
  });

  it('checks addresses, IPv4-mapped IPv6 as IPv4; an empty list allows all', () => {
    const list = buildBlockList(['10.0.0.0/8', '2001:db8::/32']);
    expect(addressAllowed(list, '10.2.3.4')).toBe(true);
    expect(addressAllowed(list, '::ffff:10.2.3.4')).toBe(true);
    expect(addressAllowed(list, '11.0.0.1')).toBe(false);
    expect(addressAllowed(list, '2001:db8::5')).toBe(true);
    expect(addressAllowed(list, 'not-an-ip')).toBe(false);
    expect(ipAllowed('192.168.1.1', [])).toBe(true);
    expect(ipAllowed('192.168.1.1', ['10.0.0.0/8'])).toBe(false);
    expect(ipAllowed('::ffff:10.0.0.1', ['10.0.0.0/8'])).toBe(true);
  });

  it('isSubset: every inner block inside some outer block of the same family', () => {
    expect(isSubset(['10.1.0.0/16', '10.2.3.4'], ['10.0.0.0/8'], 'f')).toBe(true);
    expect(isSubset(['10.0.0.0/7'], ['10.0.0.0/8'], 'f')).toBe(false);
    expect(isSubset(['::1'], ['10.0.0.0/8'], 'f')).toBe(false);
    expect(hostCidr('10.0.0.1')).toBe('10.0.0.1/32');
    expect(hostCidr('::1')).toBe('::1/128');
  });
});
