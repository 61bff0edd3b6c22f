/**
 * Shamir secret sharing over GF(2^8) (the AES field, x^8+x^4+x^3+x+1).
 *
 * Security invariants:
 * - every polynomial coefficient and x-coordinate comes from node:crypto;
 * - x-coordinates are distinct and never 0 (the share at x=0 is the secret);
 * - field arithmetic uses no secret-indexed tables or secret-dependent
 *   branches, so combining shares does not leak through cache timing.
 * A share is the y-bytes followed by one byte holding its x-coordinate.
 */
import { randomBytes, randomInt } from 'node:crypto';

/** Constant-time multiplication in GF(2^8). */
function mul(a: number, b: number): number {
  let r = 0;
  for (let i = 0; i < 8; i++) {
    r ^= -(b & 1) & a;
    const carry = -((a >> 7) & 1) & 0x1b;
    a = ((a << 1) ^ carry) & 0xff;
    b >>= 1;
  }
  return r & 0xff;
}

/** Inverse as a^254 (Fermat), constant time; inv(0) is 0 and never used. */
function inv(a: number): number {
  let result = 1;
  let base = a;
  for (let e = 254; e > 0; e >>= 1) {
    // Exponent is public, so branching on it leaks nothing.
    if (e & 1) result = mul(result, base);
    base = mul(base, base);
  }
  return result;
}

export class ShamirError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ShamirError';
  }
}

/** Splits `secret` into `parts` shares, any `threshold` of which rebuild it. 1 <= threshold <= parts <= 255. */
export function split(secret: Uint8Array, parts: number, threshold: number): Buffer[] {
  if (!Number.isInteger(parts) || !Number.isInteger(threshold)) throw new ShamirError('parts and threshold must be integers');
  if (parts < 1 || parts > 255) throw new ShamirError('parts must be between 1 and 255');
  if (threshold < 1 || threshold > parts) throw new ShamirError('threshold must be between 1 and parts');
  if (secret.length === 0) throw new ShamirError('cannot split an empty secret');

  // Distinct non-zero x-coordinates in random order: a partial Fisher-Yates shuffle of 1..255.
  const xs = Array.from({ length: 255 }, (_, i) => i + 1);
  for (let i = 0; i < parts; i++) {
    const j = randomInt(i, 255);
    const t = xs[i] as number;
    xs[i] = xs[j] as number;
    xs[j] = t;
  }

  const len = secret.length;
  const shares = Array.from({ length: parts }, (_, i) => {
    const s = Buffer.alloc(len + 1);
    s[len] = xs[i] as number;
    return s;
  });
  // coeffs[k*len + b] is the degree-(k+1) coefficient of byte b's polynomial.
  const coeffs = randomBytes((threshold - 1) * len);
  try {
    for (let p = 0; p < parts; p++) {
      const share = shares[p] as Buffer;
      const x = xs[p] as number;
      for (let b = 0; b < len; b++) {
        // Horner's rule from the highest coefficient down to the secret byte.
        let y = 0;
        for (let k = threshold - 2; k >= 0; k--) y = mul(y, x) ^ (coeffs[k * len + b] as number);
        share[b] = mul(y, x) ^ (secret[b] as number);
      }
    }
  } finally {
    coeffs.fill(0);
  }
  return shares;
}

/**
 * Rebuilds the secret from shares by Lagrange interpolation at x=0. Given
 * fewer than the threshold it returns an unrelated value (no error: the
 * scheme cannot tell), so callers must verify the result (the barrier does,
 * by decrypting the root key with it).
 */
export function combine(shares: readonly Uint8Array[]): Buffer {
  if (shares.length < 1 || shares.length > 255) throw new ShamirError('between 1 and 255 shares are needed');
  const first = shares[0] as Uint8Array;
  const shareLen = first.length;
  if (shareLen < 2) throw new ShamirError('shares must be at least 2 bytes long');
  const seen = new Set<number>();
  for (const s of shares) {
    if (s.length !== shareLen) throw new ShamirError('all shares must have the same length');
    const x = s[shareLen - 1] as number;
    if (x === 0) throw new ShamirError('invalid share: x-coordinate 0');
    if (seen.has(x)) throw new ShamirError('duplicate share');
    seen.add(x);
  }

  const xs = shares.map((s) => s[shareLen - 1] as number);
  // Lagrange basis at 0: l_i = prod_{j != i} x_j / (x_j - x_i); subtraction is XOR.
  const basis = xs.map((xi, i) => {
    let num = 1;
    let den = 1;
    xs.forEach((xj, j) => {
      if (j === i) return;
      num = mul(num, xj);
      den = mul(den, xj ^ xi);
    });
    return mul(num, inv(den));
  });

  const len = shareLen - 1;
  const secret = Buffer.alloc(len);
  for (let b = 0; b < len; b++) {
    let acc = 0;
    for (let i = 0; i < shares.length; i++) acc ^= mul((shares[i] as Uint8Array)[b] as number, basis[i] as number);
    secret[b] = acc;
  }
  return secret;
}
