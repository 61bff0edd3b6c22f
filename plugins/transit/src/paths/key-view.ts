/** The `data` of a key read (spec "Transit key": read fields). Never includes key material. */
import { isAsymmetric, typeSupport, EC_CURVES, isEcdsa } from '../keys/key-types.js';
import { publicKeyForRead } from '../keys/export.js';
import type { LoadedPolicy } from '../keys/policy.js';

export function keyView(p: LoadedPolicy): Record<string, unknown> {
  const r = p.record;
  const keys: Record<string, unknown> = {};
  for (const [v, kv] of Object.entries(r.versions)) {
    if (isAsymmetric(r.type)) {
      keys[v] = {
        creation_time: new Date(kv.creation_time).toISOString(),
        name: isEcdsa(r.type) ? EC_CURVES[r.type].name : r.type,
        public_key: publicKeyForRead(p, p.version(Number(v))),
      };
    } else {
      keys[v] = Math.floor(kv.creation_time / 1000);
    }
  }
  const data: Record<string, unknown> = {
    name: r.name,
    type: r.type,
    deletion_allowed: r.deletion_allowed,
    derived: r.derived,
    exportable: r.exportable,
    allow_plaintext_backup: r.allow_plaintext_backup,
    keys,
    min_decryption_version: r.min_decryption_version,
    min_encryption_version: r.min_encryption_version,
    min_available_version: r.min_available_version,
    latest_version: r.latest_version,
    auto_rotate_period: r.auto_rotate_period,
    convergent_encryption: r.convergent_encryption,
    imported: r.imported,
    imported_key: r.imported,
    soft_deleted: r.soft_deleted,
    ...typeSupport(r.type),
  };
  if (r.imported) data.imported_key_allow_rotation = r.allow_rotation;
  if (r.derived) data.kdf = r.kdf;
  if (r.convergent_encryption) data.convergent_encryption_version = r.convergent_version;
  if (r.type === 'hmac') data.key_size = r.key_size;
  if (r.backup_info) data.backup_info = r.backup_info;
  if (r.restore_info) data.restore_info = r.restore_info;
  return data;
}
