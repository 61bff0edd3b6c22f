/** Canonical HCL of an ACL policy, for `policy fmt`. */
import { UsageError } from './args.js';
import type { HclObject, HclValue } from '../hcl/parse.js';

/** Canonical HCL of a policy document, as `policy fmt` writes it. */
export function formatPolicy(text: string): string {
  // Loaded here: only `policy fmt` needs the parsers.
  const { blocksOf, parseHcl } = require('../hcl/parse.js') as typeof import('../hcl/parse.js');
  const { parsePolicy } = require('../policy/policy.js') as typeof import('../policy/policy.js');
  parsePolicy('fmt', text); // validates capabilities and parameters, not only the syntax
  const doc = parseHcl(text, { source: 'policy' });
  const out: string[] = [];
  const value = (v: HclValue, indent: string): string => {
    if (Array.isArray(v)) return `[${v.map((x) => value(x, indent)).join(', ')}]`;
    if (v !== null && typeof v === 'object') {
      const keys = Object.keys(v);
      if (!keys.length) return '{}';
      return `{\n${keys.map((k) => `${indent}  ${JSON.stringify(k)} = ${value(v[k]!, `${indent}  `)}`).join('\n')}\n${indent}}`;
    }
    return JSON.stringify(v);
  };
  for (const key of Object.keys(doc)) {
    const blocks = blocksOf(doc[key], 1);
    if (!blocks) throw new UsageError(`policy: "${key}" must be a block like ${key} "..." { ... }`);
    for (const b of blocks) {
      out.push(`${key} ${JSON.stringify(b.labels[0])} {`);
      for (const [k, v] of Object.entries(b.body as HclObject)) out.push(`  ${k} = ${value(v, '  ')}`);
      out.push('}', '');
    }
  }
  return out.join('\n');
}
