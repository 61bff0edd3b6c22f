/**
 * Password policies (`sys/policies/password/:name`), Vault syntax:
 *
 *   length = 20
 *   rule "charset" {
 *     charset   = "abcdefghijklmnopqrstuvwxyz"
 *     min-chars = 1
 *   }
 *
 * The document may arrive base64-encoded. Generation guarantees each rule's
 * minimum by drawing the required characters from that rule's charset, the
 * rest from the union of all charsets, then shuffling with an unbiased
 * Fisher-Yates; every draw is uniform (rejection sampling, no modulo bias).
 * Passwords are secrets: never log them, never put them in an error.
 */
import { badRequest, internalError } from '@strongroom/sdk-plugin';
import { z } from 'zod';
import { blocksOf, parseHcl, type HclValue } from '../hcl/parse.js';
import { createUniformRandom, type RandomBytes } from './random.js';

export const MIN_PASSWORD_LENGTH = 4;
export const MAX_PASSWORD_LENGTH = 100;

export interface CharsetRule {
  /** The charset as written. */
  charset: string;
  /** Its distinct characters (code points), in first-seen order. */
  chars: string[];
  minChars: number;
}

export interface PasswordPolicy {
  length: number;
  rules: CharsetRule[];
  /** Distinct characters of all charsets: what the unconstrained positions draw from. */
  alphabet: string[];
}

/** The policy the database engine uses when a connection names none: 20 characters, at least one upper, lower, digit and dash. */
export const DEFAULT_PASSWORD_POLICY_TEXT = `length = 20
rule "charset" {
  charset   = "abcdefghijklmnopqrstuvwxyz"
  min-chars = 1
}
rule "charset" {
  charset   = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
  min-chars = 1
}
rule "charset" {
  charset   = "0123456789"
  min-chars = 1
}
rule "charset" {
  charset   = "-"
  min-chars = 1
}
`;

/** Integers may come as numbers or digit strings (the CLI writes `length = "20"` sometimes). */
const intField = z.preprocess((v) => (typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : v), z.number().int());

const documentSchema = z
  .object({
    length: intField.refine((n) => n >= MIN_PASSWORD_LENGTH && n <= MAX_PASSWORD_LENGTH, {
      message: `must be between ${MIN_PASSWORD_LENGTH} and ${MAX_PASSWORD_LENGTH}`,
    }),
    rule: z.unknown().optional(),
  })
  .strict();

const charsetRuleSchema = z
  .object({
    charset: z.string().min(1, 'must not be empty'),
    'min-chars': intField.refine((n) => n >= 0, { message: 'must be 0 or more' }).optional(),
  })
  .strict();

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

/** A base64 document is decoded when it is strictly base64 and decodes to UTF-8 text. */
function decodeDocument(text: string): string {
  const compact = text.replace(/\s+/g, '');
  if (compact.length === 0 || compact.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(compact)) return text;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(compact, 'base64'));
  } catch {
    return text;
  }
}

/** Parse a password policy document (HCL or JSON, possibly base64). Errors are 400s naming the field. */
export function parsePasswordPolicy(text: string): PasswordPolicy {
  if (typeof text !== 'string' || text.trim() === '') throw badRequest('policy: must not be empty');
  const doc = parseHcl(decodeDocument(text), { source: 'policy' });
  const top = documentSchema.safeParse(doc);
  if (!top.success) throw badRequest(zodMessage('policy: ', top.error, doc));
  const blocks = blocksOf(doc.rule as HclValue | undefined, 1);
  if (blocks === null) throw badRequest('policy: rule: expected blocks like rule "charset" { charset = "abc" }');
  if (blocks.length === 0) throw badRequest('policy: rule: at least one rule "charset" is required');
  const rules = blocks.map((blk, i): CharsetRule => {
    const kind = blk.labels[0] as string;
    if (kind !== 'charset') throw badRequest(`policy: rule "${kind}": unknown rule type (only "charset" is supported)`);
    const parsed = charsetRuleSchema.safeParse(blk.body);
    if (!parsed.success) throw badRequest(zodMessage(`policy: rule "charset" #${i + 1}: `, parsed.error, blk.body));
    return { charset: parsed.data.charset, chars: [...new Set(Array.from(parsed.data.charset))], minChars: parsed.data['min-chars'] ?? 0 };
  });
  const length = top.data.length;
  const required = rules.reduce((sum, r) => sum + r.minChars, 0);
  if (required > length) throw badRequest(`policy: the rules' min-chars add up to ${required}, more than length ${length}`);
  const alphabet = [...new Set(rules.flatMap((r) => r.chars))];
  return { length, rules, alphabet };
}

/** Whether a password meets the policy's length (in characters) and every rule's minimum. */
export function satisfiesPolicy(policy: PasswordPolicy, password: string): boolean {
  const chars = Array.from(password);
  if (chars.length !== policy.length) return false;
  return policy.rules.every((rule) => {
    if (rule.minChars === 0) return true;
    const set = new Set(rule.chars);
    let count = 0;
    for (const c of chars) if (set.has(c) && ++count >= rule.minChars) return true;
    return false;
  });
}

export interface GenerateOptions {
  /** Injected in tests only; defaults to node:crypto's CSPRNG. */
  randomBytes?: RandomBytes;
}

export function generatePassword(policy: PasswordPolicy, opts: GenerateOptions = {}): string {
  const random = createUniformRandom(opts.randomBytes);
  const pick = (chars: string[]) => chars[random.index(chars.length)] as string;
  const out: string[] = [];
  for (const rule of policy.rules) for (let k = 0; k < rule.minChars; k++) out.push(pick(rule.chars));
  while (out.length < policy.length) out.push(pick(policy.alphabet));
  for (let i = out.length - 1; i > 0; i--) {
    const j = random.index(i + 1);
    const tmp = out[i] as string;
    out[i] = out[j] as string;
    out[j] = tmp;
  }
  const password = out.join('');
  // Cannot fail for a policy from parsePasswordPolicy; guards hand-built policy objects.
  if (!satisfiesPolicy(policy, password)) throw internalError('generated password does not satisfy its policy');
  return password;
}

/**
 * Run before saving a policy (spec: "the policy is test-generated before
 * saving"): generates a few passwords and checks each against the rules, so
 * a policy that cannot produce a valid password is refused with a 400.
 */
export function testGenerate(policy: PasswordPolicy, attempts = 5): void {
  for (let i = 0; i < attempts; i++) {
    let password: string;
    try {
      password = generatePassword(policy);
    } catch {
      throw badRequest('policy: unable to generate a password that satisfies the policy');
    }
    if (!satisfiesPolicy(policy, password)) throw badRequest('policy: unable to generate a password that satisfies the policy');
  }
}

let defaultPolicy: PasswordPolicy | undefined;
export function defaultPasswordPolicy(): PasswordPolicy {
  defaultPolicy ??= parsePasswordPolicy(DEFAULT_PASSWORD_POLICY_TEXT);
  return defaultPolicy;
}
