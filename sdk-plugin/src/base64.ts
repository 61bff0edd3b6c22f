/**
 * Base64 checks in one pass over the characters, without a regex. A
 * backtracking pattern such as `^(?:[A-Za-z0-9+/]{4})*...$` keeps one stack
 * frame per repetition and overflows on inputs of tens of megabytes (a
 * near-32 MiB request body), which turned a valid request into "invalid value".
 */

/** A-Z a-z 0-9 and the two alphabet-specific characters. */
function alphabetOnly(s: string, end: number, c62: number, c63: number): boolean {
  for (let i = 0; i < end; i++) {
    const c = s.charCodeAt(i);
    const ok = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === c62 || c === c63;
    if (!ok) return false;
  }
  return true;
}

/** Standard base64 with padding, as Go's base64.StdEncoding accepts it ('' included). */
export function isStdBase64(s: string): boolean {
  const n = s.length;
  if (n % 4 !== 0) return false;
  let pad = 0;
  if (n > 0 && s.charCodeAt(n - 1) === 61) pad = n > 1 && s.charCodeAt(n - 2) === 61 ? 2 : 1;
  return alphabetOnly(s, n - pad, 43, 47);
}

/** Unpadded URL-safe base64 (JWS), as Go's base64.RawURLEncoding accepts it. */
export function isRawUrlBase64(s: string): boolean {
  return s.length % 4 !== 1 && alphabetOnly(s, s.length, 45, 95);
}
