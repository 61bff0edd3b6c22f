/**
 * Vault accepts policy documents (ACL and password) base64-encoded to spare
 * clients the string escaping. A document is decoded only when it is strictly
 * base64, decodes to valid UTF-8 and looks like HCL or JSON (has `=` or `{`):
 * an HCL or JSON document itself never passes the strict base64 test, since
 * both need `=` mid-text, `{`, quotes or spaces.
 */
import { isStdBase64 } from '@strongroom/sdk-plugin/host';

export function decodeBase64Document(text: string): string {
  const compact = text.replace(/\s+/g, '');
  if (compact.length === 0 || !isStdBase64(compact)) return text;
  let decoded: string;
  try {
    decoded = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(compact, 'base64'));
  } catch {
    return text;
  }
  return /[{=]/.test(decoded) ? decoded : text;
}
