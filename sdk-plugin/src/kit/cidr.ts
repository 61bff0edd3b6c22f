import { BlockList, isIP } from 'node:net';
import { badRequest } from '../errors.js';

interface Cidr {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/** Parses "10.0.0.0/8" or a bare address (a /32 or /128); throws a 400 naming the field. */
export function parseCidr(s: string, field: string): Cidr {
  const [address = '', prefixText] = s.trim().split('/', 2);
  const v = isIP(address);
  if (v === 0) throw badRequest(`field "${field}": invalid CIDR "${s}"`);
  const max = v === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : /^\d+$/.test(prefixText) ? Number(prefixText) : NaN;
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) throw badRequest(`field "${field}": invalid CIDR "${s}"`);
  return { address, prefix, family: v === 4 ? 'ipv4' : 'ipv6' };
}

export function validateCidrs(list: string[], field: string): string[] {
  return list.map((c) => c.trim()).filter((c) => c !== '').map((c) => (parseCidr(c, field), c));
}

function blockOf(c: Cidr): BlockList {
  const bl = new BlockList();
  bl.addSubnet(c.address, c.prefix, c.family);
  return bl;
}

/** Whether `ip` lies in one of `cidrs` (an empty list allows every address). */
export function ipAllowed(ip: string, cidrs: string[]): boolean {
  if (cidrs.length === 0) return true;
  const v = isIP(ip);
  if (v === 0) return false;
  const family = v === 4 ? 'ipv4' : 'ipv6';
  return cidrs.some((s) => {
    const c = parseCidr(s, 'cidr');
    return c.family === family && blockOf(c).check(ip, family);
  });
}

/** Whether every block of `inner` lies inside some block of `outer`. */
export function isSubset(inner: string[], outer: string[], field: string): boolean {
  const outs = outer.map((s) => parseCidr(s, field));
  return inner.every((s) => {
    const c = parseCidr(s, field);
    // An address inside an outer block, with a prefix at least as long, means the whole inner block is inside it.
    return outs.some((o) => o.family === c.family && c.prefix >= o.prefix && blockOf(o).check(c.address, c.family));
  });
}

/** The login address as a single-host block. */
export const hostCidr = (ip: string) => (isIP(ip) === 6 ? `${ip}/128` : `${ip}/32`);
