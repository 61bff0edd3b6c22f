/**
 * Bound-CIDR checks (node:net BlockList). IPv4-mapped IPv6 addresses
 * (`::ffff:10.0.0.1`, what a dual-stack socket reports) are checked as IPv4.
 */
import { BlockList, isIP } from 'node:net';
import { badRequest } from '@strongroom/sdk-plugin/host';

interface ParsedCidr {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/** Parses "10.0.0.0/8", "2001:db8::/32" or a bare address (a /32 or /128). Throws 400 naming `field`. */
export function parseCidr(cidr: string, field: string): ParsedCidr {
  const [addr = '', bits, extra] = cidr.trim().split('/');
  const version = isIP(addr);
  const max = version === 4 ? 32 : 128;
  const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
  if (version === 0 || extra !== undefined || !(prefix >= 0 && prefix <= max)) {
    throw badRequest(`${field}: invalid CIDR block ${JSON.stringify(cidr)}`);
  }
  return { address: addr, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** Normalizes every entry (validating it); returns the list as given, trimmed. */
export function validateCidrs(cidrs: readonly string[], field: string): string[] {
  return cidrs.map((c) => {
    parseCidr(c, field);
    return c.trim();
  });
}

export function buildBlockList(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const c of cidrs) {
    const p = parseCidr(c, 'bound_cidrs');
    list.addSubnet(p.address, p.prefix, p.family);
  }
  return list;
}

const MAPPED_V4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

export function addressAllowed(list: BlockList, remoteAddr: string): boolean {
  const mapped = MAPPED_V4.exec(remoteAddr);
  const addr = mapped?.[1] ?? remoteAddr;
  const version = isIP(addr);
  if (version === 0) return false;
  return list.check(addr, version === 4 ? 'ipv4' : 'ipv6');
}
