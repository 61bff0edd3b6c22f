/**
 * The system backend mounted at sys/ in every namespace. It uses the same
 * declarative framework as the plugins, so `?help=1` and OpenAPI come free.
 * The node-local paths that answer while sealed and on a standby (init,
 * unseal, seal-status, health, leader: seal-paths.ts) come in `extraPaths`:
 * the core serves them before routing, with the same declarations. Each path
 * declares whether it exists in the root namespace only (sys-path.ts).
 */
import { defineBackend, type BackendFactory } from '@strongroom/sdk-plugin/host';
import type { SysPathDef } from './sys-path.js';
import type { SysDeps } from './deps.js';
import { adminPaths } from './admin.js';
import { auditPaths } from './audit.js';
import { capabilityPaths } from './capabilities.js';
import { diagnosticPaths } from './diagnostics.js';
import { AUTHENTICATED_ROOT_RECOVERY_PATHS } from './root-recovery.js';
import { internalPaths } from './internal.js';
import { mountPaths } from './mounts.js';
import { namespacePaths } from './namespaces.js';
import { passwordPolicyPaths } from './password-policies.js';
import { pluginPaths } from './plugins.js';
import { policyPaths } from './policies.js';

/**
 * Every sys/ path that needs `sudo`, in one place: Vault's list of root-protected
 * system paths (its policy documentation, "Root protected API endpoints"),
 * including the ones not implemented here yet, so a path that lands later is
 * protected from its first commit. Any operation on a matching path needs sudo
 * (the pipeline checks it after the ACL). The token backend's own list
 * (auth/token/accessors, revoke-orphan) lives with that backend.
 */
const SYS_ROOT_PATHS = [
  'audit',
  'audit/*',
  'auth/*',
  'config/auditing/*',
  'config/cors',
  'config/ui/headers/*',
  'host-info',
  'in-flight-req',
  'internal/inspect/*',
  'leases',
  'leases/lookup/*',
  'leases/revoke-force/*',
  'leases/revoke-prefix/*',
  'monitor',
  'plugins/catalog/*',
  'plugins/reload/*',
  'raw',
  'raw/*',
  'rekey/backup',
  'remount',
  'revoke-force/*',
  'revoke-prefix/*',
  'rotate',
  'rotate/config',
  'seal',
  'step-down',
  'storage/raft/snapshot-auto/config/*',
  // Vault's raft snapshot paths, under the names this server serves for every storage.
  'storage/snapshot',
  'storage/snapshot-restore',
  'storage/snapshot-restore-force',
  // Not in Vault's list: OpenBao's authenticated generate-root and rekey, which mint a root
  // token or replace the unseal keys, need sudo here (OpenBao asks only for the ACL capability).
  ...AUTHENTICATED_ROOT_RECOVERY_PATHS,
];

export function createSystemBackend(deps: SysDeps, opts: { rootNamespace: boolean } = { rootNamespace: true }): BackendFactory {
  const all: SysPathDef[] = [
      ...adminPaths(deps),
      ...mountPaths(deps),
      ...namespacePaths(deps),
      ...policyPaths(deps),
      ...passwordPolicyPaths(deps),
      ...capabilityPaths(deps),
      ...pluginPaths(deps),
      ...auditPaths(deps),
      ...internalPaths(deps),
      ...diagnosticPaths(deps),
      ...(deps.extraPaths ?? []),
  ];
  // The type asks every path where it exists; paths assembled at run time are held to it too.
  const undeclared = all.filter((p) => typeof p.rootOnly !== 'boolean').map((p) => p.pattern.source);
  if (undeclared.length) throw new Error(`sys/ paths without rootOnly: ${undeclared.join(', ')}`);
  return defineBackend({
    type: 'secret',
    help: 'The system backend: mounts, policies, audit devices, plugins, leases and the seal.',
    paths: opts.rootNamespace ? all : all.filter((p) => !p.rootOnly),
    specialPaths: { root: SYS_ROOT_PATHS },
  });
}
