/**
 * The transit engine: encryption as a service. Keys are cached decoded in
 * this process (see store.ts) and dropped on invalidation; every path is
 * declared in `paths/`, one per file.
 */
import { type BackendFactory, defineBackend, hashToolPath, randomToolPath } from '@strongroom/sdk-plugin';
import { createTransitStore } from './store.js';
import { canRotate } from './keys/key-types.js';
import type { PolicyRecord } from './keys/policy.js';
import { backupPath } from './paths/backup.js';
import { byokExportPath } from './paths/byok-export.js';
import { cacheConfigPath } from './paths/cache-config.js';
import type { TransitDeps } from './paths/common.js';
import { configKeysPath } from './paths/config-keys.js';
import { datakeyPath } from './paths/datakey.js';
import { decryptPath } from './paths/decrypt.js';
import { encryptPath } from './paths/encrypt.js';
import { exportPath } from './paths/export.js';
import { hmacPath } from './paths/hmac.js';
import { keysConfigPath } from './paths/keys-config.js';
import { keysImportPath } from './paths/keys-import.js';
import { keysImportVersionPath } from './paths/keys-import-version.js';
import { keysListPath } from './paths/keys-list.js';
import { keysRotatePath, rotateKey } from './paths/keys-rotate.js';
import { keysSoftDeletePath } from './paths/keys-soft-delete.js';
import { keysSoftDeleteRestorePath } from './paths/keys-soft-delete-restore.js';
import { keysTrimPath } from './paths/keys-trim.js';
import { keysPath } from './paths/keys.js';
import { restorePath } from './paths/restore.js';
import { rewrapPath } from './paths/rewrap.js';
import { signPath } from './paths/sign.js';
import { verifyPath } from './paths/verify.js';
import { wrappingKeyPath } from './paths/wrapping-key.js';

export interface TransitOptions {
  /** Unix milliseconds; injectable so rotation tests need no real clock. */
  now?: () => number;
}

export function createTransitFactory(opts: TransitOptions = {}): BackendFactory {
  const now = opts.now ?? Date.now;
  return defineBackend({
    type: 'secret',
    help: HELP,
    async setup(env) {
      const store = createTransitStore(env.storage);
      const deps: TransitDeps = { store, now };
      try {
        await store.cacheSize();
      } catch (e) {
        env.logger.warn('transit: could not read cache-config; using an unbounded cache', { error: e instanceof Error ? e.message : String(e) });
      }
      return {
        paths: [
          keysListPath(deps),
          keysPath(deps),
          keysConfigPath(deps),
          keysRotatePath(deps),
          keysTrimPath(deps),
          keysSoftDeletePath(deps),
          keysSoftDeleteRestorePath(deps),
          keysImportPath(deps),
          keysImportVersionPath(deps),
          wrappingKeyPath(deps),
          encryptPath(deps),
          decryptPath(deps),
          rewrapPath(deps),
          datakeyPath(deps),
          randomToolPath('random{/:source}{/:urlbytes}'),
          hashToolPath('hash{/:algorithm}'),
          hmacPath(deps),
          signPath(deps),
          verifyPath(deps),
          exportPath(deps),
          byokExportPath(deps),
          backupPath(deps),
          restorePath(deps),
          configKeysPath(deps),
          cacheConfigPath(deps),
        ],
        invalidate: (key) => {
          store.records.invalidate(key);
          if (key === 'config/cache') {
            store.cacheSize().catch((e: unknown) => env.logger.warn('transit: could not read cache-config', { error: e instanceof Error ? e.message : String(e) }));
          }
        },
        // Auto-rotation (spec: auto_rotate_period): rotate every key whose latest version is older than its period.
        periodic: async () => {
          const t = now();
          for (const name of await store.list()) {
            try {
              const p = await store.get(name);
              if (!p) continue;
              const r = p.record;
              if (!due(r, t)) continue;
              await rotateKey(env, store, name, t, (cur) => due(cur, t));
            } catch (e) {
              env.logger.warn('transit: auto-rotation failed', { key: name, error: e instanceof Error ? e.message : String(e) });
            }
          }
        },
        cleanup: async () => store.records.clear(),
      };
    },
  });
}

function due(r: PolicyRecord, t: number): boolean {
  if (r.auto_rotate_period <= 0 || r.soft_deleted || !canRotate(r.type)) return false;
  if (r.imported && !r.allow_rotation) return false;
  const latest = r.versions[String(r.latest_version)];
  return latest !== undefined && t - latest.creation_time >= r.auto_rotate_period * 1000;
}

const HELP = `The transit engine encrypts, decrypts, signs, verifies and hashes data without storing it.
Keys are named and versioned; ciphertexts look like \`service:v<N>:<base64>\`.`;
