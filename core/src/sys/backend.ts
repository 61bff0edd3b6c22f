/**
 * The system backend mounted at sys/ in every namespace. It uses the same
 * declarative framework as the plugins, so `?help=1` and OpenAPI come free.
 * The seal endpoints that must answer while sealed (init, unseal,
 * seal-status, health) are served before routing, by core/src/server/core.ts.
 */
import { defineBackend, type BackendFactory } from '@strongroom/sdk-plugin';
import type { SysDeps } from './deps.js';
import { adminPaths } from './admin.js';
import { auditPaths } from './audit.js';
import { capabilityPaths } from './capabilities.js';
import { internalPaths } from './internal.js';
import { mountPaths } from './mounts.js';
import { namespacePaths } from './namespaces.js';
import { passwordPolicyPaths } from './password-policies.js';
import { pluginPaths } from './plugins.js';
import { policyPaths } from './policies.js';

/** Paths that need sudo, as in Vault. */
export const SYS_ROOT_PATHS = [
  'audit',
  'audit/*',
  'rotate',
  'seal',
  'step-down',
  'plugins/catalog/*',
  'plugins/reload/*',
  'leases/lookup/*',
  'leases/revoke-prefix/*',
  'leases/revoke-force/*',
  'raw/*',
];

export function createSystemBackend(deps: SysDeps): BackendFactory {
  return defineBackend({
    type: 'secret',
    help: 'The system backend: mounts, policies, audit devices, plugins, leases and the seal.',
    paths: [
      ...adminPaths(deps),
      ...mountPaths(deps),
      ...namespacePaths(deps),
      ...policyPaths(deps),
      ...passwordPolicyPaths(deps),
      ...capabilityPaths(deps),
      ...pluginPaths(deps),
      ...auditPaths(deps),
      ...internalPaths(deps),
      ...(deps.extraPaths ?? []),
    ],
    specialPaths: { root: SYS_ROOT_PATHS },
  });
}
