/**
 * CIDR blocks, the one parser of the codebase: the core's token_bound_cidrs
 * and the engines' (approle, ssh). Checks use node:net's BlockList;
 * IPv4-mapped IPv6 addresses (`::ffff:10.0.0.1`, what a dual-stack socket
 * reports) are checked as IPv4.
 */
import { BlockList, isIP } from 'node:net';
import { badRequest } from '../errors.js';

interface Cidr {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/** Parses "10.0.0.0/8", "2001:db8::/32" or a bare address (a /32 or /128); throws a 400 naming the field. */
export function parseCidr(s: string, field: string): Cidr {
  const [address = '', prefixText, extra] = s.trim().split('/');
  const v = isIP(address);
  const max = v === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
  if (v === 0 || extra !== undefined || !(prefix >= 0 && prefix <= max)) throw badRequest(`field "${field}": invalid CIDR "${s}"`);
  return { address, prefix, family: v === 4 ? 'ipv4' : 'ipv6' };
}

/** The list trimmed, empty entries dropped, every block checked (400 naming the field). */
export function validateCidrs(list: readonly string[], field: string): string[] {
  return list.map((c) => c.trim()).filter((c) => c !== '').map((c) => (parseCidr(c, field), c));
}

/** One BlockList of all `cidrs` (build once, check many addresses). */
export function buildBlockList(cidrs: readonly string[], field = 'cidr'): BlockList {
  const list = new BlockList();
  for (const s of cidrs) {
    const c = parseCidr(s, field);
    list.addSubnet(c.address, c.prefix, c.family);
  }
  return list;
}

const MAPPED_V4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/** Whether `ip` lies in `list`; an unparsable address never does. */
export function addressAllowed(list: BlockList, ip: string): boolean {
  const addr = MAPPED_V4.exec(ip)?.[1] ?? ip;
  const v = isIP(addr);
  return v !== 0 && list.check(addr, v === 4 ? 'ipv4' : 'ipv6');
}

/** Whether `ip` lies in one of `cidrs` (an empty list allows every address). */
export function ipAllowed(ip: string, cidrs: readonly string[]): boolean {
  return cidrs.length === 0 || addressAllowed(buildBlockList(cidrs), ip);
}

/** Whether every block of `inner` lies inside some block of `outer`. */
export function isSubset(inner: readonly string[], outer: readonly string[], field: string): boolean {
  const outs = outer.map((s) => ({ c: parseCidr(s, field), list: buildBlockList([s], field) }));
  return inner.every((s) => {
    const c = parseCidr(s, field);
    // An address inside an outer block, with a prefix at least as long, means the whole inner block is inside it.
    return outs.some((o) => o.c.family === c.family && c.prefix >= o.c.prefix && o.list.check(c.address, c.family));
  });
}

/** An address as a single-host block. */
export const hostCidr = (ip: string) => (isIP(ip) === 6 ? `${ip}/128` : `${ip}/32`);
