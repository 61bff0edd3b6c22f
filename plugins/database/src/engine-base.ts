import type { Logger, SystemView } from '@strongroom/sdk-plugin';
import type { Connections } from './connections.js';
import type { DatabaseStore } from './store.js';

/** What one mount's parts share below its rotations (they are built on it, so it cannot name them). */
export interface EngineBase {
  store: DatabaseStore;
  connections: Connections;
  system: SystemView;
  logger: Logger;
  now: () => number;
}
