/**
 * Removes known secrets from a message before it reaches a response or a log
 * (an upstream error that echoes a request). Each secret is replaced wherever
 * it occurs, as written and URL-encoded.
 */
export function scrubSecrets(message: string, secrets: readonly string[]): string {
  let out = message;
  // Longest first, so a secret containing another is removed whole.
  const all = [...new Set(secrets.flatMap((s) => (s ? [s, encodeURIComponent(s)] : [])))].sort((a, b) => b.length - a.length);
  for (const s of all) out = out.split(s).join('[redacted]');
  return out;
}
