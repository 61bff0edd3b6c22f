/** `keys/:name/rotate`: add a version (spec: only types that encrypt and decrypt; imported keys only with allow_rotation). */
import { badRequest, definePath, f, publishEvent } from '@strongroom/sdk-plugin';

type EventEnv = Parameters<typeof publishEvent>[0];
import { canRotate } from '../keys/key-types.js';
import { addVersion, generateVersion, type PolicyRecord } from '../keys/policy.js';
import { requireKeyCopy, type TransitDeps } from './common.js';
import type { TransitStore } from '../store.js';

/** Rotates `name` under its lock and publishes `transit/key-rotate`; shared with the periodic auto-rotation. */
export async function rotateKey(env: EventEnv, store: TransitStore, name: string, now: number, onlyIf?: (r: PolicyRecord) => boolean): Promise<boolean> {
  return store.locked(name, async () => {
    const r = await requireKeyCopy(store, name);
    if (onlyIf && !onlyIf(r)) return false;
    if (r.soft_deleted) throw badRequest(`key "${name}" is soft-deleted; restore it first`);
    if (!canRotate(r.type)) throw badRequest(`key type ${r.type} cannot be rotated: only key types that support encryption and decryption can`);
    if (r.imported && !r.allow_rotation) throw badRequest('imported key cannot be rotated: allow_rotation was not set at import');
    addVersion(r, await generateVersion(r.type, r.key_size, now));
    if (r.imported) r.rotated_after_import = true;
    await store.save(r);
    await publishEvent(env, 'transit/key-rotate', `keys/${name}`, { name, version: r.latest_version });
    return true;
  });
}

export function keysRotatePath(deps: TransitDeps) {
  return definePath({
    pattern: 'keys/:name/rotate',
    fields: { name: f.string().describe('Name of the key.') },
    operations: {
      update: {
        summary: 'Rotate a key.',
        handler: async (req) => {
          await rotateKey(req, deps.store, req.data.name, deps.now());
          return null;
        },
      },
    },
    synopsis: 'Rotate a named key: new encryption uses the new version.',
  });
}
