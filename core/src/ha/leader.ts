/** sys/leader's answer: this node's view of who is active. */
import type { HaManager } from './ha-manager.js';

/** sys/leader's body, as Vault's. */
export interface LeaderStatus {
  ha_enabled: boolean;
  is_self: boolean;
  active_time: string;
  leader_address: string;
  leader_cluster_address: string;
  performance_standby: boolean;
  performance_standby_last_remote_wal: number;
}

/** Without HA the node is its own leader at `apiAddr`; a standby asks storage once when it knows no leader yet. */
export async function leaderStatus(ha: HaManager | null, apiAddr: string): Promise<LeaderStatus> {
  if (ha && !ha.leader()) await ha.refreshLeader();
  const leader = ha?.leader() ?? null;
  return {
    ha_enabled: ha !== null,
    is_self: ha ? leader?.isSelf === true : true,
    active_time: (ha?.activeSince ?? new Date(0)).toISOString(),
    leader_address: ha ? (leader?.value ?? '') : apiAddr,
    leader_cluster_address: '',
    performance_standby: false,
    performance_standby_last_remote_wal: 0,
  };
}
