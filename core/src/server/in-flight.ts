/**
 * The requests this node is serving right now, for sys/in-flight-req (Vault's
 * shape: request id -> start_time, client_remote_address, request_path,
 * request_method, client_id). The path is the URL path alone: no query, no
 * body, no token.
 */
import type { ApiHandler, ApiRequest } from '../http/types.js';

export interface InFlightRequest {
  start_time: string;
  client_remote_address: string;
  request_path: string;
  request_method: string;
  client_id: string;
}

export function createInFlight() {
  // The request and its start in ms: the listing is built when asked for, not on every request's way in.
  const live = new Map<string, { req: ApiRequest; started: number }>();
  return {
    /** The handler, each request listed from its start until its reply is made. */
    track(handle: ApiHandler): ApiHandler {
      return async (req) => {
        live.set(req.id, { req, started: Date.now() });
        try {
          return await handle(req);
        } finally {
          live.delete(req.id);
        }
      };
    },
    snapshot: (): Record<string, InFlightRequest> => {
      const out: Record<string, InFlightRequest> = {};
      for (const [id, { req, started }] of live) {
        out[id] = { start_time: new Date(started).toISOString(), client_remote_address: req.remoteAddress, request_path: `/v1/${req.urlPath}`, request_method: req.method, client_id: '' };
      }
      return out;
    },
    /** How many requests besides this one are being served (a snapshot restore waits for them to finish). */
    othersThan: (id: string): number => live.size - (live.has(id) ? 1 : 0),
  };
}

export type InFlight = ReturnType<typeof createInFlight>;
