import type { EngineBase } from './engine-base.js';
import type { RootRotation } from './root-rotation.js';
import type { StaticRotation } from './static-rotation.js';

/** What the paths of one mount share: the base and the two rotations built on it. */
export interface EngineDeps extends EngineBase {
  rotation: StaticRotation;
  rootRotation: RootRotation;
}

/** Whether a connection lets a role use it: an exact name, or a glob where `*` matches anything (`*` alone allows any). */
export function roleAllowed(allowed: readonly string[], role: string): boolean {
  return allowed.some((pattern) => {
    if (!pattern.includes('*')) return pattern === role;
    const parts = pattern.split('*').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    return new RegExp(`^${parts.join('.*')}$`, 's').test(role);
  });
}
