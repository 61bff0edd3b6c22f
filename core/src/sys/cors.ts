/**
 * sys/config/cors: read, set and turn off cross-origin access (root namespace,
 * sudo). The configuration is kept in the barrier and loaded at unseal; the
 * listener applies it (http/cors.ts).
 */
import { badRequest, f } from '@strongroom/sdk-plugin/host';
import { defineSysPath, type SysPathDef } from './sys-path.js';
import { CORS_DISABLED, corsConfigOf, type Cors, type CorsConfig } from '../http/cors.js';
import type { Physical } from '../storage/physical.js';

const CORS_KEY = 'core/cors-config';

export interface CorsStore {
  /** Loads the stored configuration into the live one (at unseal). */
  load(): Promise<void>;
  save(config: CorsConfig): Promise<void>;
}

export function createCorsStore(store: Pick<Physical, 'get' | 'put' | 'delete'>, cors: Cors): CorsStore {
  return {
    async load() {
      const raw = await store.get(CORS_KEY);
      cors.set(raw ? (JSON.parse(Buffer.from(raw).toString('utf8')) as CorsConfig) : CORS_DISABLED);
    },
    async save(config) {
      if (config.enabled) await store.put(CORS_KEY, Buffer.from(JSON.stringify(config), 'utf8'));
      else await store.delete(CORS_KEY);
      cors.set(config);
    },
  };
}

export function corsPaths(deps: { cors: Cors; store: CorsStore }): SysPathDef[] {
  return [
    defineSysPath({
      rootOnly: true,
      pattern: 'config/cors',
      fields: {
        allowed_origins: f.commaList().optional().describe('Origins allowed to make cross-origin requests: "*" or a list (comma-separated or an array).'),
        allowed_headers: f.commaList().optional().describe('Headers allowed on cross-origin requests, added to the standard ones.'),
      },
      synopsis: 'Cross-origin resource sharing (CORS) for browser clients.',
      operations: {
        read: {
          summary: 'The CORS configuration.',
          handler: async () => ({ data: { ...deps.cors.config() } }),
        },
        update: {
          summary: 'Turn CORS on for the given origins.',
          handler: async (req) => {
            const origins = (req.data.allowed_origins ?? []).map(String).filter(Boolean);
            if (origins.length === 0) throw badRequest('allowed_origins: at least one origin (or "*") is required');
            if (origins.includes('*') && origins.length > 1) throw badRequest('allowed_origins: "*" must be the only value');
            await deps.store.save(corsConfigOf(origins, (req.data.allowed_headers ?? []).map(String).filter(Boolean)));
            return null;
          },
        },
        delete: {
          summary: 'Turn CORS off.',
          handler: async () => {
            await deps.store.save(CORS_DISABLED);
            return null;
          },
        },
      },
    }),
  ];
}
