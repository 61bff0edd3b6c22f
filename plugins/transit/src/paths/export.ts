/** `export/:key_type/:name{/:version}`: export key material of an exportable key. */
import { definePath, f } from '@strongroom/sdk-plugin';
import { EXPORT_FORMATS, EXPORT_KEY_TYPES, exportKeys } from '../keys/export.js';
import { requireKey, type TransitDeps } from './common.js';

export function exportPath(deps: TransitDeps) {
  return definePath({
    pattern: 'export/:key_type/:name{/:version}',
    fields: {
      key_type: f.enum(EXPORT_KEY_TYPES).describe('encryption-key, signing-key, hmac-key or public-key.'),
      name: f.string().describe('Name of the key.'),
      version: f.string().optional().describe('A version number or `latest`; omitted exports every valid version.'),
      format: f.query(f.enum(EXPORT_FORMATS).default('')).describe('Empty (type default), raw, der or pem.'),
    },
    operations: {
      read: {
        summary: 'Export a key.',
        handler: async (req) => {
          const d = req.data;
          const key = await requireKey(deps.store, d.name);
          return { data: { name: d.name, type: key.record.type, keys: exportKeys(key, d.key_type, d.version, d.format) } };
        },
      },
    },
    synopsis: 'Export key material of an exportable key.',
  });
}
