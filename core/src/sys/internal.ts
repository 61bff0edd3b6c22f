/**
 * sys/internal/ui/mounts(/:path), which clients use to detect kv versions, and
 * sys/internal/specs/openapi, the whole API's OpenAPI document.
 */
import { f, permissionDenied } from '@strongroom/sdk-plugin/host';
import { defineSysPath, type SysPathDef } from './sys-path.js';
import { routePath, type MountEntry } from '../mounts/mount-table.js';
import type { Namespace } from '../namespace/namespaces.js';
import type { InProcessRequest } from '../request/ports.js';
import type { TokenEntry } from '../token/index.js';
import type { SysDeps } from './deps.js';
import { mountView } from './mounts.js';
import { namespaceOf } from './namespace-of.js';

export function internalPaths(deps: SysDeps): SysPathDef[] {
  /** The caller's token entry: these paths are unauthenticated for routing, but answer only a valid token. */
  const callerOf = (req: { raw: unknown }) => {
    const entry = (req.raw as InProcessRequest).callerEntry;
    if (!entry) throw permissionDenied();
    return entry;
  };
  /** Only mounts under which the caller has some capability are shown (Vault filters this list by the ACL too). */
  const visible = async (entry: TokenEntry, ns: Namespace, mounts: MountEntry[]) => {
    const seen = await Promise.all(mounts.map((e) => deps.capabilities.seesMount(entry, ns, routePath(e))));
    return mounts.filter((_, i) => seen[i]);
  };
  return [
    defineSysPath({
      rootOnly: false,
      pattern: 'internal/ui/mounts',
      synopsis: 'Mounts visible to the caller.',
      unauthenticated: true,
      operations: {
        read: {
          summary: 'Secret and auth mounts.',
          handler: async (req) => {
            const caller = callerOf(req);
            const ns = namespaceOf(deps, req.mount);
            const secret: Record<string, unknown> = {};
            const auth: Record<string, unknown> = {};
            for (const e of await visible(caller, ns, deps.mounts.list('mounts', ns))) secret[e.path] = mountView(e, deps.mounts.runningVersion(e.uuid));
            for (const e of await visible(caller, ns, deps.mounts.list('auth', ns))) auth[e.path] = mountView(e, deps.mounts.runningVersion(e.uuid));
            return { data: { secret, auth } };
          },
        },
      },
    }),
    defineSysPath({
      rootOnly: false,
      pattern: 'internal/ui/mounts/*path',
      fields: { path: f.string().describe('A path inside a mount.') },
      synopsis: 'The mount that serves a path (clients use it to detect the kv version).',
      unauthenticated: true,
      operations: {
        read: {
          summary: 'Mount of a path.',
          handler: async (req) => {
            const caller = callerOf(req);
            const ns = namespaceOf(deps, req.mount);
            const wanted = req.data.path.replace(/^\/+/, '');
            const all = [...deps.mounts.list('mounts', ns), ...deps.mounts.list('auth', ns)];
            const match = all
              .map((e) => ({ e, rp: routePath(e) }))
              .filter(({ rp }) => `${wanted}/`.startsWith(rp))
              .sort((a, b) => b.rp.length - a.rp.length)[0];
            // A missing mount answers as a hidden one, so the path cannot map which mounts exist (Vault does the same).
            const denied = () => permissionDenied(`preflight capability check returned 403, please ensure client's policies grant access to path "${wanted}"`);
            if (!match) throw denied();
            if (!(await deps.capabilities.seesMount(caller, ns, match.rp))) throw denied();
            return { data: { ...mountView(match.e, deps.mounts.runningVersion(match.e.uuid)), path: match.rp } };
          },
        },
      },
    }),
    defineSysPath({
      rootOnly: false,
      pattern: 'internal/specs/openapi',
      synopsis: 'The OpenAPI 3 document of every mounted path.',
      operations: {
        // The document itself, not inside the envelope: OpenAPI tooling and Vault's clients read it as is.
        read: {
          summary: 'OpenAPI document.',
          handler: async (req) => ({ raw: { status: 200, contentType: 'application/json', body: JSON.stringify(await deps.openapi(namespaceOf(deps, req.mount))) } }),
        },
      },
    }),
  ];
}
