/**
 * Password policies as structures, and generation from them, so an engine can
 * produce a password without a round trip to the core (the core parses the
 * HCL documents of `sys/policies/password/:name` into the same structure).
 *
 * Generation guarantees each rule's minimum by drawing the required
 * characters from that rule's charset, the rest from the union of all
 * charsets, then shuffling with an unbiased Fisher-Yates; every draw is
 * uniform (rejection sampling, no modulo bias).
 * Passwords are secrets: never log them, never put them in an error.
 */
import { badRequest, internalError } from '../errors.js';
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

export interface PasswordPolicySpec {
  length: number;
  rules: Array<{ charset: string; minChars?: number }>;
}

/**
 * Build a policy from its length and charset rules, checking what holds for
 * any policy (length range, non-empty charsets, minimums within the length).
 * Errors are 400s prefixed `policy: `, the field the document arrives in.
 */
export function passwordPolicy(spec: PasswordPolicySpec): PasswordPolicy {
  const { length } = spec;
  if (!Number.isInteger(length) || length < MIN_PASSWORD_LENGTH || length > MAX_PASSWORD_LENGTH) {
    throw badRequest(`policy: length: must be between ${MIN_PASSWORD_LENGTH} and ${MAX_PASSWORD_LENGTH}`);
  }
  if (spec.rules.length === 0) throw badRequest('policy: rule: at least one rule "charset" is required');
  const rules = spec.rules.map((r, i): CharsetRule => {
    const minChars = r.minChars ?? 0;
    if (r.charset.length === 0) throw badRequest(`policy: rule "charset" #${i + 1}: charset: must not be empty`);
    if (!Number.isInteger(minChars) || minChars < 0) throw badRequest(`policy: rule "charset" #${i + 1}: min-chars: must be 0 or more`);
    return { charset: r.charset, chars: [...new Set(Array.from(r.charset))], minChars };
  });
  const required = rules.reduce((sum, r) => sum + r.minChars, 0);
  if (required > length) throw badRequest(`policy: the rules' min-chars add up to ${required}, more than length ${length}`);
  return { length, rules, alphabet: [...new Set(rules.flatMap((r) => r.chars))] };
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
  // Cannot fail for a policy from passwordPolicy(); guards hand-built policy objects.
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
/**
 * What the database engine uses when a connection names no policy: 20
 * characters, at least one upper, lower, digit and dash (Vault's default).
 * Shared, so frozen: a caller cannot weaken it for everyone.
 */
export function defaultPasswordPolicy(): PasswordPolicy {
  defaultPolicy ??= deepFreeze(passwordPolicy({
    length: 20,
    rules: [
      { charset: 'abcdefghijklmnopqrstuvwxyz', minChars: 1 },
      { charset: 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', minChars: 1 },
      { charset: '0123456789', minChars: 1 },
      { charset: '-', minChars: 1 },
    ],
  }));
  return defaultPolicy;
}

function deepFreeze(policy: PasswordPolicy): PasswordPolicy {
  for (const rule of policy.rules) Object.freeze(Object.freeze(rule).chars);
  Object.freeze(policy.rules);
  Object.freeze(policy.alphabet);
  return Object.freeze(policy);
}
