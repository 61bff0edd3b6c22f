/**
 * Backup and restore blobs: base64 of a JSON document holding the whole key
 * policy, every version's material included.
 *
 * Security invariant: a backup is plaintext key material, so it is only made
 * for keys whose `allow_plaintext_backup` is set (which can never be unset),
 * and a restored record is validated before it is stored.
 */
import { z } from 'zod';
import { badRequest, codedError } from '@strongroom/sdk-plugin';
import { policyRecord, type PolicyRecord } from './policy.js';

// A backup holds a stored record of a key that allows plaintext backup and has at least one version.
const policySchema = policyRecord.extend({ allow_plaintext_backup: z.literal(true), latest_version: z.number().int().min(1) });

const BACKUP_FORMAT = 1;

export function makeBackup(p: Readonly<PolicyRecord>, now: Date): string {
  // Vault answers 500 with this text, and clients match both.
  if (!p.allow_plaintext_backup) throw codedError(500, 'plaintext backup is disallowed on the policy: allow_plaintext_backup is not set on the key');
  if (p.latest_version === 0) throw badRequest('key has no versions to back up');
  const record: PolicyRecord = { ...p, backup_info: { time: now.toISOString(), version: p.latest_version } };
  return Buffer.from(JSON.stringify({ format: BACKUP_FORMAT, policy: record }), 'utf8').toString('base64');
}

/** Parses a backup; `name` (when given) renames the restored key. */
export function readBackup(blob: string, name: string | undefined, now: Date): PolicyRecord {
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(blob, 'base64').toString('utf8'));
  } catch {
    throw badRequest('invalid backup: not base64-encoded JSON');
  }
  const parsed = z.object({ format: z.literal(BACKUP_FORMAT), policy: policySchema }).safeParse(doc);
  if (!parsed.success) throw badRequest(`invalid backup: ${parsed.error.issues[0]?.path.join('.') || 'document'} is malformed`);
  const p: PolicyRecord = parsed.data.policy;
  for (let v = Math.max(1, p.min_available_version); v <= p.latest_version; v++) {
    if (!p.versions[String(v)]) throw badRequest(`invalid backup: version ${v} is missing`);
  }
  return { ...p, name: name ?? p.name, restore_info: { time: now.toISOString(), version: p.latest_version } };
}
