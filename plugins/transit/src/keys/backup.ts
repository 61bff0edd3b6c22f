/**
 * Backup and restore blobs: base64 of a JSON document holding the whole key
 * policy, every version's material included.
 *
 * Security invariant: a backup is plaintext key material, so it is only made
 * for keys whose `allow_plaintext_backup` is set (which can never be unset),
 * and a restored record is validated before it is stored.
 */
import { z } from 'zod';
import { badRequest } from '@strongroom/sdk-plugin';
import { KEY_TYPES } from './key-types.js';
import type { PolicyRecord } from './policy.js';

const versionSchema = z.object({
  key: z.string().optional(),
  private_key: z.string().optional(),
  public_key: z.string().optional(),
  hmac_key: z.string(),
  creation_time: z.number(),
});

const policySchema = z
  .object({
    name: z.string(),
    type: z.enum(KEY_TYPES),
    derived: z.boolean(),
    kdf: z.literal('hkdf_sha256'),
    convergent_encryption: z.boolean(),
    convergent_version: z.number().int(),
    exportable: z.boolean(),
    allow_plaintext_backup: z.literal(true),
    deletion_allowed: z.boolean(),
    key_size: z.number().int().min(0),
    auto_rotate_period: z.number().int().min(0),
    min_decryption_version: z.number().int().min(0),
    min_encryption_version: z.number().int().min(0),
    min_available_version: z.number().int().min(0),
    latest_version: z.number().int().min(1),
    versions: z.record(z.string(), versionSchema),
    imported: z.boolean(),
    allow_rotation: z.boolean(),
    rotated_after_import: z.boolean(),
    soft_deleted: z.boolean(),
    backup_info: z.object({ time: z.string(), version: z.number() }).optional(),
    restore_info: z.object({ time: z.string(), version: z.number() }).optional(),
  })
  .loose();

const BACKUP_FORMAT = 1;

export function makeBackup(p: PolicyRecord, now: Date): string {
  if (!p.allow_plaintext_backup) throw badRequest('exporting a backup is not allowed: allow_plaintext_backup is not set on the key');
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
  const p = parsed.data.policy as PolicyRecord;
  for (let v = Math.max(1, p.min_available_version); v <= p.latest_version; v++) {
    if (!p.versions[String(v)]) throw badRequest(`invalid backup: version ${v} is missing`);
  }
  return { ...p, name: name ?? p.name, restore_info: { time: now.toISOString(), version: p.latest_version } };
}
