/**
 * What a standby does with a request that is not node-local: forwards it to
 * the active node (its answer comes back as is), or answers a 307 to it when
 * the client asked not to be forwarded.
 */
import { StrongroomError } from '@strongroom/sdk-plugin/host';
import type { ApiReply, ApiRequest } from '../http/types.js';
import { FORWARDED_FOR_HEADER, createForwarder, forwardingKey, redirectReply, wantsRedirect } from './forward.js';
import type { HaManager } from './ha-manager.js';

export interface StandbyForwarding {
  forward(req: ApiRequest): Promise<ApiReply>;
  /** Drops the forwarding key (on seal): it is read again after the next unseal. */
  forget(): void;
  close(): void;
}

export function createStandbyForwarding(deps: { ha: HaManager; readHmacKey(): Promise<Buffer | null> }): StandbyForwarding {
  const { ha } = deps;
  const forwarder = createForwarder();
  /** The forwarding key, read from storage once. */
  let key: Buffer | null = null;
  return {
    async forward(req) {
      const leader = ha.leader() ?? (await ha.refreshLeader());
      if (ha.state === 'activating' || leader?.isSelf) throw new StrongroomError('unavailable', 'this node is becoming the active node; retry shortly');
      if (!leader || leader.value === '') throw new StrongroomError('unavailable', 'local node not active but active cluster node not found');
      if (wantsRedirect(req.headers)) return redirectReply(req, leader.value);
      if (req.headers[FORWARDED_FOR_HEADER] !== undefined) throw new StrongroomError('unavailable', 'the active node changed while forwarding; retry');
      if (!key) {
        const hmacKey = await deps.readHmacKey();
        if (!hmacKey) throw new StrongroomError('unavailable', 'the cluster is not set up yet: no active node has served');
        key = forwardingKey(hmacKey);
      }
      return forwarder.forward(req, leader.value, key);
    },
    forget: () => void (key = null),
    close: () => forwarder.close(),
  };
}
