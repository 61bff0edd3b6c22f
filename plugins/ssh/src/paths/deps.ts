import type { SystemView } from '@strongroom/sdk-plugin';
import type { SshStore } from '../store.js';

/** What every path of the engine gets. */
export interface SshDeps {
  store: SshStore;
  system: Pick<SystemView, 'defaultLeaseTtl' | 'maxLeaseTtl'>;
}
