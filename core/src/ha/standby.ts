/**
 * What a standby does with a request that is not node-local. With standby
 * reads on (the default) and its state built, it serves the request itself
 * unless serving it tries to write (ha/standby-guard.ts refuses the write at
 * the storage, so nothing is written), the path is one only the active node
 * serves, the client asked for an index (`X-Service-Index` / `X-Vault-Index`)
 * this node has not applied within a moment, or it failed here with a server
 * error; then the request goes to the active node whole. Otherwise, and with
 * standby reads off, it forwards: the active node's answer comes back as is,
 * or a 307 to it when the client asked not to be forwarded.
 */
import { StrongroomError, httpStatusFor } from '@strongroom/sdk-plugin/host';
import type { ApiReply, ApiRequest } from '../http/types.js';
import type { Follower } from './follower.js';
import { FORWARDED_FOR_HEADER, createForwarder, forwardingKey, isEventSubscription, redirectReply, wantsRedirect } from './forward.js';
import type { HaManager } from './ha-manager.js';
import type { StandbyGuard } from './standby-guard.js';

/** Write responses carry the change number they committed at; a read may send it back. */
const INDEX_HEADERS = ['x-service-index', 'x-vault-index'] as const;
/** How long a read carrying an index waits for this standby to apply it before it goes to the active node. */
const INDEX_WAIT_MS = 1_000;
/** After forwarding a write, how long the standby waits to apply it, so its next read here sees it. */
const OWN_WRITE_WAIT_MS = 500;
/** Served by the active node alone: they act on the node itself or hold state in its memory (attempts, step-down, seal). */
const ACTIVE_ONLY = /(^|\/)sys\/(step-down|seal$|generate-root|rekey|rotate|plugins\/reload|replication|storage\/snapshot)/;

/** The index a request or reply carries, or 0. */
function indexOf(headers: Record<string, string | string[] | undefined>): number {
  for (const h of INDEX_HEADERS) {
    const v = headers[h] ?? headers[h.replace(/(^|-)([a-z])/g, (_, d: string, c: string) => d + c.toUpperCase())];
    const n = typeof v === 'string' && /^\d{1,15}$/.test(v.trim()) ? Number(v.trim()) : 0;
    if (n > 0) return n;
  }
  return 0;
}

export interface StandbyForwarding {
  forward(req: ApiRequest): Promise<ApiReply>;
  /**
   * Serves `req` on this standby with `local` (the request pipeline) when it writes nothing, else
   * forwards it (see the header). `follower` is null while the standby's state is not built.
   */
  serve(req: ApiRequest, local: ((req: ApiRequest) => Promise<ApiReply>) | null, follower: Follower | null): Promise<ApiReply>;
  /** Drops the forwarding key (on seal): it is read again after the next unseal. */
  forget(): void;
  close(): void;
}

export function createStandbyForwarding(deps: {
  ha: HaManager;
  readHmacKey(): Promise<Buffer | null>;
  guard: StandbyGuard;
  /** Counts what the standby did with a request (the metric strongroom_ha_standby_requests_total). */
  count(outcome: string): void;
}): StandbyForwarding {
  const { ha, guard, count } = deps;
  const forwarder = createForwarder();
  /** The forwarding key, read from storage once. */
  let key: Buffer | null = null;
  const forwardAs = async (outcome: string, req: ApiRequest, follower: Follower | null): Promise<ApiReply> => {
    count(outcome);
    const reply = await self.forward(req);
    // The client's next read may come here: let this node apply what the active node just committed.
    const index = follower && reply.headers ? indexOf(reply.headers) : 0;
    if (index > 0) await follower!.caughtUp(index, OWN_WRITE_WAIT_MS);
    return reply;
  };
  const self: StandbyForwarding = {
    async serve(req, local, follower) {
      if (!local || !follower || req.headers[FORWARDED_FOR_HEADER] !== undefined) return forwardAs('forwarded_unready', req, null);
      // Events are published where writes are made: a subscription is relayed from the active node.
      if (ACTIVE_ONLY.test(req.path) || isEventSubscription(req)) return forwardAs('forwarded_always', req, follower);
      const wanted = indexOf(req.headers);
      if (wanted > follower.applied && !(await follower.caughtUp(wanted, INDEX_WAIT_MS))) return forwardAs('forwarded_index', req, follower);
      const { wrote, outcome } = await guard.attempt(() => local(req));
      if (wrote) return forwardAs('forwarded_write', req, follower);
      if (!outcome.ok) {
        // A server-side failure here (a plugin still starting, storage) may not be one on the active node.
        if (httpStatusFor(outcome.error) >= 500) return forwardAs('forwarded_error', req, follower);
        count('served');
        throw outcome.error;
      }
      if (outcome.value.status >= 500) return forwardAs('forwarded_error', req, follower);
      count('served');
      return outcome.value;
    },
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
      // A monitor streams the log of the node asked, without end: never buffered from the active node.
      if (req.method === 'GET' && /(^|\/)sys\/monitor$/.test(req.urlPath)) throw new StrongroomError('unavailable', 'sys/monitor: this standby cannot serve it yet (ask again shortly, or ask the active node for its own log)');
      return isEventSubscription(req) ? forwarder.forwardEvents(req, leader.value, key) : forwarder.forward(req, leader.value, key);
    },
    forget: () => void (key = null),
    close: () => forwarder.close(),
  };
  return self;
}
