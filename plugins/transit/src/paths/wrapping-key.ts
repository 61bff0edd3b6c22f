/** `wrapping_key`: the public half of the mount's 4096-bit RSA BYOK wrapping key. */
import { definePath } from '@strongroom/sdk-plugin';
import { publicPem } from '../store.js';
import type { TransitDeps } from './common.js';

export function wrappingKeyPath(deps: TransitDeps) {
  return definePath({
    pattern: 'wrapping_key',
    operations: {
      read: {
        summary: 'Read the wrapping key.',
        handler: async () => ({ data: { public_key: publicPem(await deps.store.wrappingKey()) } }),
      },
    },
    synopsis: 'The public key to wrap keys for import.',
  });
}
