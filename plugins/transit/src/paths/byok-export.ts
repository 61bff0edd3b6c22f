/**
 * `byok-export/:destination/:source{/:version}`: the source key's material
 * wrapped for the destination RSA key, in the import ciphertext format. Same
 * guard as export: the source must be exportable and not soft-deleted.
 */
import { badRequest, definePath, f } from '@strongroom/sdk-plugin';
import { byokWrap } from '../crypto/byok.js';
import { byokMaterial, selectVersions } from '../keys/export.js';
import { isRsa } from '../keys/key-types.js';
import { requireKey, type TransitDeps } from './common.js';

export function byokExportPath(deps: TransitDeps) {
  return definePath({
    pattern: 'byok-export/:destination/:source{/:version}',
    fields: {
      destination: f.string().describe('Name of the RSA key to wrap for.'),
      source: f.string().describe('Name of the key to export.'),
      version: f.string().optional().describe('A version number or `latest`; omitted exports every valid version.'),
      hash: f.query(f.enum(['SHA1', 'SHA224', 'SHA256', 'SHA384', 'SHA512']).default('SHA256')).describe('OAEP hash function.'),
    },
    operations: {
      read: {
        summary: 'Export a key wrapped for another key.',
        handler: async (req) => {
          const d = req.data;
          const dest = await requireKey(deps.store, d.destination);
          const src = await requireKey(deps.store, d.source);
          if (!isRsa(dest.record.type)) throw badRequest('destination key must be an RSA key');
          if (dest.record.soft_deleted || src.record.soft_deleted) throw badRequest('soft-deleted keys cannot be used for BYOK export');
          if (!src.record.exportable) throw badRequest('source key is not exportable');
          const destPub = dest.version(dest.record.latest_version).publicKey;
          if (!destPub) throw badRequest('destination key has no public key');
          const keys: Record<string, string> = {};
          for (const v of selectVersions(src, d.version)) keys[String(v)] = byokWrap(destPub, byokMaterial(src, src.version(v)), d.hash);
          return { data: { name: d.source, type: src.record.type, keys } };
        },
      },
    },
    synopsis: 'Export a key wrapped for a destination RSA key (BYOK).',
  });
}
