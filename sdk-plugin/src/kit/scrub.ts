/**
 * Credential scrubbing, for every engine that talks to a system with
 * credentials (databases, LDAP, RabbitMQ, SSH hosts): what a driver or server
 * says may quote the password it was given, and a stored connection's
 * details are read back without their credentials.
 */

/** Replaces every occurrence of each secret (and its URL-encoded form) in a message from a driver or server. */
export function scrubSecrets(text: string, secrets: readonly (string | undefined | null)[]): string {
  // Longest first: a secret that contains a shorter one must go whole, or the rest of it stays readable.
  const forms = new Set<string>();
  for (const s of secrets) if (s) for (const form of [s, encodeURIComponent(s)]) forms.add(form);
  let out = text;
  for (const form of [...forms].sort((a, b) => b.length - a.length)) out = out.split(form).join('[redacted]');
  return out;
}

/** Keys of connection details that hold credentials and are never read back. */
const SECRET_KEY = /password|private_key|secret|token|credential/i;
/** Keys whose string value is a URL or DSN that may carry an inline password. */
const URL_KEY = /url|dsn|uri/i;

/**
 * Connection details as they may be shown: keys holding credentials dropped,
 * a URL's inline password masked (`scheme://user:*****@host`); a
 * `{{password}}` template placeholder holds no secret and is kept.
 */
export function redactCredentials(details: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(details)) {
    if (SECRET_KEY.test(k)) continue;
    out[k] = typeof v === 'string' && URL_KEY.test(k) ? redactUrl(v) : v;
  }
  return out;
}

function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*):([^@/]*)@/i, (m, head: string, pw: string) => (pw === '{{password}}' ? m : `${head}:*****@`));
}
