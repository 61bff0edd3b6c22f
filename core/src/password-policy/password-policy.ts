/**
 * Password policy documents (`sys/policies/password/:name`), Vault syntax:
 *
 *   length = 20
 *   rule "charset" {
 *     charset   = "abcdefghijklmnopqrstuvwxyz"
 *     min-chars = 1
 *   }
 *
 * The document may arrive base64-encoded. This module only parses; the
 * structure, its checks and generation live in the SDK so engines share them.
 */
import { badRequest, passwordPolicy, type PasswordPolicy } from '@strongroom/sdk-plugin/host';
import { z } from 'zod';
import { decodeBase64Document } from '../hcl/base64-document.js';
import { blocksOf, parseHcl, type HclValue } from '../hcl/parse.js';

/** Integers may come as numbers or digit strings (the CLI writes `length = "20"` sometimes). */
const intField = z.preprocess((v) => (typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : v), z.number().int());

// Ranges and cross-rule checks are passwordPolicy()'s; these schemas only check shapes and types.
const documentSchema = z.object({ length: intField, rule: z.unknown().optional() }).strict();

const charsetRuleSchema = z.object({ charset: z.string(), 'min-chars': intField.optional() }).strict();

function zodMessage(prefix: string, error: z.ZodError, input: Record<string, unknown>): string {
  const issue = error.issues[0];
  if (!issue) return `${prefix}invalid`;
  if (issue.code === 'unrecognized_keys') return `${prefix}unknown field "${issue.keys[0] ?? ''}"`;
  const field = issue.path.join('.');
  const key = issue.path[0];
  if (typeof key === 'string' && !Object.hasOwn(input, key)) return `${prefix}${field}: is required`;
  if (issue.code === 'invalid_type') return `${prefix}${field}: must be ${issue.expected === 'number' ? 'an integer' : `a ${issue.expected}`}`;
  return `${prefix}${field}: ${issue.message}`;
}

/** Parse a password policy document (HCL or JSON, possibly base64). Errors are 400s naming the field. */
export function parsePasswordPolicy(text: string): PasswordPolicy {
  if (typeof text !== 'string' || text.trim() === '') throw badRequest('policy: must not be empty');
  const doc = parseHcl(decodeBase64Document(text), { source: 'policy' });
  const top = documentSchema.safeParse(doc);
  if (!top.success) throw badRequest(zodMessage('policy: ', top.error, doc));
  const blocks = blocksOf(doc.rule as HclValue | undefined, 1);
  if (blocks === null) throw badRequest('policy: rule: expected blocks like rule "charset" { charset = "abc" }');
  const rules = blocks.map((blk, i) => {
    const kind = blk.labels[0] as string;
    if (kind !== 'charset') throw badRequest(`policy: rule "${kind}": unknown rule type (only "charset" is supported)`);
    const parsed = charsetRuleSchema.safeParse(blk.body);
    if (!parsed.success) throw badRequest(zodMessage(`policy: rule "charset" #${i + 1}: `, parsed.error, blk.body));
    return { charset: parsed.data.charset, minChars: parsed.data['min-chars'] ?? 0 };
  });
  return passwordPolicy({ length: top.data.length, rules });
}
