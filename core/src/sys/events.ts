/**
 * sys/events/subscribe/:event_type: a stream of change events (server-sent
 * events, or WebSocket frames on an upgrade). The pipeline has already
 * checked `read` on the path, i.e. on `sys/events/subscribe/<event_type>`,
 * as in Vault. What each event needs is decided at delivery, with the token
 * checked again (revoked or expired: the stream ends; looked up at most once a
 * second, the token store ending a revoked token's streams at once) and the
 * ACL of its policies as they are then: `read` or `list` on the event's
 * path, or `sudo` on it for lease and mount events (their path is under
 * `sys/leases/lookup/`). Only events of
 * the request's namespace reach the subscriber, and of the namespaces below
 * it that `namespaces` (globs relative to it) names.
 */
import { badRequest, f, type HandlerRequest } from '@strongroom/sdk-plugin/host';
import { z } from 'zod';
import { eventTypeMatcher, type EventHub, type StampedEvent, type Verdict } from '../events/hub.js';
import type { InProcessRequest, InProcessResponse } from '../request/ports.js';
import type { Namespace, NamespaceRegistry } from '../namespace/namespaces.js';
import type { TokenEntry } from '../token/index.js';
import { defineSysPath, type SysPathDef } from './sys-path.js';

const EVENT_TYPE = z
  .string()
  .min(1, 'event_type: required')
  .max(256, 'event_type: at most 256 characters')
  .regex(/^[A-Za-z0-9_.*/-]+$/, 'event_type: letters, digits, "_", ".", "-", "/" and "*" globs only');
/**
 * How long a subscriber's token entry is trusted between lookups. A revocation or
 * expiry ends the stream at once anyway (the token store's destroy hook); this bounds
 * the cost of a busy stream to one token lookup a second, not one per event.
 */
const TOKEN_RECHECK_MS = 1_000;
const NAMESPACE_GLOB = z
  .string()
  .max(512)
  .regex(/^[A-Za-z0-9_.*/-]*$/, 'namespaces: namespace paths and "*" globs only');

export interface EventPathDeps {
  hub: EventHub;
  namespaces: Pick<NamespaceRegistry, 'byPath' | 'byId'>;
  lookupToken(id: string): Promise<TokenEntry | null>;
  capabilities(entry: TokenEntry, ns: Namespace, path: string): Promise<string[]>;
}

export function eventPaths(deps: EventPathDeps): SysPathDef[] {
  return [
    defineSysPath({
      rootOnly: false,
      pattern: 'events/subscribe/*event_type',
      fields: {
        event_type: f.string().describe('The event type to subscribe to; "*" matches any characters ("kv-v2/data-*", "*").'),
        namespaces: f.query(f.commaList()).optional().describe('Namespaces below this one to receive events from as well: paths relative to it, "*" globs ("team-a", "team-*/*").'),
        json: f.query(f.bool()).optional().describe("Accepted for the Vault CLI's sake; events are always JSON."),
      },
      synopsis: 'Subscribe to change events (server-sent events, or WebSocket frames on an upgrade).',
      description: `Each event is a JSON object with id, event_type, time, namespace, mount, path and
metadata (never a secret). An event reaches the subscriber only if its token may read (or list)
the event's path when it is delivered; lease and mount events need sudo on their path under
sys/leases/lookup/. A slow subscriber gets a "dropped" notice with the count it lost.
Last-Event-ID resumes after an event from the server's log, or answers a "gap" notice.`,
      operations: {
        read: {
          summary: 'Stream change events.',
          handler: async (req: HandlerRequest<{ event_type: string; namespaces?: string[] | undefined }>): Promise<InProcessResponse> => {
            const type = EVENT_TYPE.safeParse(req.data.event_type);
            if (!type.success) throw badRequest(type.error.issues[0]!.message);
            const globs = (req.data.namespaces ?? []).map((n) => n.trim().replace(/^\/+|\/+$/g, '')).filter((n) => n !== '');
            for (const g of globs) {
              const ok = NAMESPACE_GLOB.safeParse(g);
              if (!ok.success) throw badRequest(ok.error.issues[0]!.message);
            }
            const here = deps.namespaces.byPath(req.mount.namespace);
            if (!here) throw badRequest(`namespace "${req.mount.namespace}" does not exist`);
            const raw = req.raw as InProcessRequest;
            const caller = raw.callerEntry;
            const tokenId = raw.clientToken;
            if (!caller || !tokenId) throw badRequest('a token is required');
            const below = globs.map(eventTypeMatcher);
            const namespaces = (_id: string, path: string) => {
              if (!path.startsWith(here.path)) return false;
              const rel = path.slice(here.path.length).replace(/\/$/, '');
              return rel === '' || below.some((m) => m(rel));
            };
            let entry: TokenEntry | null = caller;
            let checked = Date.now();
            const verdict = async (e: StampedEvent): Promise<Verdict> => {
              if (Date.now() - checked >= TOKEN_RECHECK_MS) {
                entry = await deps.lookupToken(tokenId);
                checked = Date.now();
              }
              if (!entry) return 'end';
              const ns = deps.namespaces.byId(e.namespaceId);
              if (!ns) return 'skip';
              const caps = await deps.capabilities(entry, ns, e.access.path);
              if (caps.includes('root')) return 'deliver';
              const ok = e.access.capability === 'sudo' ? caps.includes('sudo') : caps.includes('read') || caps.includes('list');
              return ok ? 'deliver' : 'skip';
            };
            return {
              eventStream: {
                open: (sink, o) => void deps.hub.subscribe({ eventType: type.data, namespaces, verdict, tokenKey: caller.key, lastEventId: o.lastEventId }, sink),
              },
            };
          },
        },
      },
    }),
  ];
}
