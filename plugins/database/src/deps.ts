import type { StaticRoleRotation } from '@strongroom/sdk-plugin';
import type { Logger, SystemView } from '@strongroom/sdk-plugin/host';
import type { Connections } from './connections.js';
import type { DatabaseStore, StaticRole } from './store.js';
import type { RootRotation } from './root-rotation.js';

/** What the paths of one mount share. */
export interface EngineDeps {
  store: DatabaseStore;
  connections: Connections;
  system: SystemView;
  logger: Logger;
  rotation: StaticRoleRotation<StaticRole>;
  rootRotation: RootRotation;
  now: () => number;
}

/** Whether a connection lets a role use it: an exact name, or a glob where `*` matches anything (`*` alone allows any). */
export function roleAllowed(allowed: readonly string[], role: string): boolean {
  return allowed.some((pattern) => {
    if (!pattern.includes('*')) return pattern === role;
    const parts = pattern.split('*').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    return new RegExp(`^${parts.join('.*')}$`, 's').test(role);
  });
}
