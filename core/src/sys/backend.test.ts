/**
 * Where a sys/ path exists is declared on the path (sys-path.ts): the paths of
 * the server as a whole are in the root namespace's sys/ only, a child
 * namespace's sys/ answers them as unsupported (404), and a path that does not
 * say is refused when the backend is built.
 */
import { createTestBackend, definePath, StrongroomError, type PathDef } from '@strongroom/sdk-plugin/host';
import { createSystemBackend } from './backend.js';
import type { SysDeps } from './deps.js';
import { corsPaths } from './cors.js';
import { quotaPaths } from './quotas.js';
import { rootRecoveryPaths } from './root-recovery.js';
import { createNodeLocal } from './seal-paths.js';
import { defineSysPath, type SysPathDef } from './sys-path.js';
import { snapshotPaths } from './snapshot.js';
import { wrappingPaths } from './wrapping.js';

/** The server-wide paths: the ones Vault serves from the root namespace only. */
const ROOT_ONLY = [
  'audit', 'audit/*path', 'audit-hash/*path', 'config/cors', 'generate-root/attempt', 'generate-root/update', 'generate-root-token/attempt', 'generate-root-token/update', 'health', 'init', 'key-status', 'leader',
  'loggers', 'loggers/:name', 'metrics', 'plugins/catalog', 'plugins/catalog/:type', 'plugins/catalog/:type/:name', 'plugins/reload/backend', 'plugins/reload/backend/status', 'quotas/config', 'rekey/backup', 'rekey/init',
  'rekey/update', 'rekey/verify', 'rekey-recovery-key/init', 'rekey-recovery-key/update', 'rekey-recovery-key/verify', 'rotate', 'rotate/root/init', 'rotate/root/update', 'rotate/root/verify', 'seal', 'seal-status', 'step-down', 'unseal',
  'storage/snapshot', 'storage/snapshot-restore', 'storage/snapshot-restore-force',
  'host-info', 'in-flight-req', 'monitor',
];

const extra = (rootOnly: boolean, pattern: string): SysPathDef =>
  defineSysPath({ rootOnly, pattern, synopsis: pattern, operations: { read: { summary: pattern, handler: async () => ({ data: { pattern } }) } } });

// The paths are only declared here, never called: the deps they would use stay empty.
const deps = (extraPaths: SysPathDef[]) => ({ extraPaths, logger: { levels: () => ({ base: 'info', named: {} }) } }) as unknown as SysDeps;

/** The sys/ paths the core adds beside the backend's own (unsealed.ts), with their real declarations. */
async function coreExtras(): Promise<SysPathDef[]> {
  const nodeLocal = await createNodeLocal({} as unknown as Parameters<typeof createNodeLocal>[0]);
  return [...nodeLocal.paths, ...wrappingPaths({} as never), ...corsPaths({} as never), ...quotaPaths({} as never), ...rootRecoveryPaths({} as never), ...snapshotPaths({} as never)];
}

async function patterns(rootNamespace: boolean): Promise<string[]> {
  const t = await createTestBackend(createSystemBackend(deps(await coreExtras()), { rootNamespace }));
  return t.backend.describe().paths.map((p) => p.pattern);
}

describe('sys/ paths and namespaces', () => {
  it('a child namespace has every path but the root-only ones', async () => {
    const root = await patterns(true);
    const child = await patterns(false);
    expect(root).toEqual(expect.arrayContaining(ROOT_ONLY));
    expect(root.filter((p) => !child.includes(p)).sort()).toEqual([...ROOT_ONLY].sort());
    expect(child).toEqual(expect.arrayContaining(['mounts', 'mounts/*path', 'policies/acl/:name', 'namespaces/:path', 'tools/hash{/:algorithm}', 'capabilities-self', 'wrapping/unwrap', 'quotas/rate-limit', 'quotas/rate-limit/:name', 'quotas/lease-count', 'quotas/lease-count/:name']));
  });

  it('a root-only path answers unsupported (404) in a child namespace and serves in the root one', async () => {
    const paths = [extra(true, 'server-wide'), extra(false, 'per-namespace')];
    const child = await createTestBackend(createSystemBackend(deps(paths), { rootNamespace: false }));
    const err = await child.read('server-wide').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StrongroomError);
    expect((err as StrongroomError).status).toBe(404);
    expect((await child.read('per-namespace'))?.data).toEqual({ pattern: 'per-namespace' });
    const root = await createTestBackend(createSystemBackend(deps(paths), { rootNamespace: true }));
    expect((await root.read('server-wide'))?.data).toEqual({ pattern: 'server-wide' });
  });

  it('refuses a path that does not declare where it exists', () => {
    const bare: PathDef = definePath({ pattern: 'forgot', operations: { read: { summary: 'x', handler: async () => null } } });
    expect(() => createSystemBackend(deps([bare as SysPathDef]))).toThrow(/sys\/ paths without rootOnly: forgot/);
  });
});
