/** sys/capabilities-self, sys/capabilities and sys/capabilities-accessor (Vault's documented API). */
import { badRequest, f } from '@strongroom/sdk-plugin/host';
import { defineSysPath, type SysPathDef } from './sys-path.js';
import type { InProcessRequest } from '../request/ports.js';
import type { SysDeps } from './deps.js';
import { namespaceOf } from './namespace-of.js';

const fields = {
  path: f.deprecated(f.string().optional().describe('Deprecated: use paths.')),
  paths: f.commaList().optional().describe('Paths to check the capabilities of.'),
  token: f.sensitive(f.string().optional().describe('Token to check (sys/capabilities).')),
  accessor: f.string().optional().describe('Accessor of the token to check (sys/capabilities-accessor).'),
};

export function capabilityPaths(deps: SysDeps): SysPathDef[] {
  const make = (pattern: string, who: 'self' | 'token' | 'accessor') =>
    defineSysPath({
      rootOnly: false,
      pattern,
      fields,
      synopsis: 'Capabilities of a token on paths.',
      operations: {
        update: {
          summary: 'Return the capabilities on each path.',
          handler: async (req) => {
            const paths = req.data.paths?.length ? req.data.paths : req.data.path ? [req.data.path] : [];
            if (paths.length === 0) throw badRequest('paths: at least one path is required');
            const ns = namespaceOf(deps, req.mount);
            const data: Record<string, string[]> = {};
            for (const p of paths) {
              const clean = p.replace(/^\/+/, '');
              // The caller's own entry, not a lookup by accessor: a batch token has no accessor index.
              if (who === 'self') data[p] = await deps.capabilities.forEntry((req.raw as InProcessRequest).callerEntry ?? null, ns, clean);
              else if (who === 'accessor') {
                if (!req.data.accessor) throw badRequest('accessor: required');
                data[p] = await deps.capabilities.forAccessor(req.data.accessor, ns, clean);
              } else {
                if (!req.data.token) throw badRequest('token: required');
                data[p] = await deps.capabilities.forToken(req.data.token, ns, clean);
              }
            }
            // A single path is also answered as `capabilities`, as Vault does.
            const first = data[paths[0]!] ?? [];
            return { data: { ...data, capabilities: paths.length === 1 ? first : [...new Set(Object.values(data).flat())].sort() } };
          },
        },
      },
    });
  return [make('capabilities-self', 'self'), make('capabilities', 'token'), make('capabilities-accessor', 'accessor')];
}
