/** `random{/:source}{/:bytes}`: random bytes. A single numeric segment is the byte count (`random/64`). */
import { randomBytes } from 'node:crypto';
import { badRequest, definePath, f } from '@strongroom/sdk-plugin';

const MAX_BYTES = 128 * 1024;

export function randomPath() {
  return definePath({
    pattern: 'random{/:source}{/:urlbytes}',
    fields: {
      source: f.string().optional().describe('`platform` (default) or `all`.'),
      urlbytes: f.string().optional().describe('Byte count given in the URL.'),
      bytes: f.int({ min: 1, max: MAX_BYTES }).default(32).describe('Number of bytes (default 32).'),
      format: f.enum(['base64', 'hex']).default('base64').describe('Output encoding.'),
    },
    operations: {
      update: {
        summary: 'Generate random bytes.',
        handler: async (req) => {
          let { source, urlbytes } = req.data;
          let bytes = req.data.bytes;
          if (source !== undefined && /^\d+$/.test(source) && urlbytes === undefined) {
            urlbytes = source;
            source = undefined;
          }
          if (urlbytes !== undefined) {
            if (!/^\d+$/.test(urlbytes)) throw badRequest('field "bytes": invalid integer in the URL');
            bytes = Number(urlbytes);
          }
          if (bytes < 1 || bytes > MAX_BYTES) throw badRequest(`field "bytes": must be between 1 and ${MAX_BYTES}`);
          // Every source is the platform CSPRNG here: there is no seal-backed entropy source in this service.
          if (source !== undefined && source !== 'platform' && source !== 'all') {
            throw badRequest('field "source": must be "platform" or "all"');
          }
          const buf = randomBytes(bytes);
          return { data: { random_bytes: buf.toString(req.data.format) } };
        },
      },
    },
    synopsis: 'Generate random bytes.',
  });
}
