/**
 * Every API request counted and timed (strongroom_requests_total,
 * strongroom_request_duration_seconds) and written to the request log.
 * The log never gets the token, the body or the query: method, path with
 * token-looking segments masked, status, time and namespace.
 */
import { httpStatusFor } from '@strongroom/sdk-plugin/host';
import type { ApiHandler } from '../http/types.js';
import type { CoreLogger, LogLevel } from '../log/logger.js';
import type { Router } from '../mounts/mount-table.js';
import type { NamespaceRegistry } from '../namespace/namespaces.js';
import type { Metrics } from './metrics.js';

export interface RequestObserverDeps {
  metrics: Metrics;
  log: CoreLogger;
  level: LogLevel | 'off';
  namespaces: NamespaceRegistry;
  router: Router<unknown>;
  /** Paths served while sealed: counted under the root namespace's sys/ even then. */
  sealPath(path: string): boolean;
}

export function observeRequests(handle: ApiHandler, deps: RequestObserverDeps): ApiHandler {
  const { metrics, log, level } = deps;
  return async (req) => {
    const started = process.hrtime.bigint();
    let status = 500;
    try {
      const reply = await handle(req);
      status = reply.status;
      return reply;
    } catch (err) {
      status = httpStatusFor(err);
      throw err;
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const { mount, namespace } = deps.sealPath(req.path) ? { mount: 'sys/', namespace: 'root' } : mountLabel(deps, req.path);
      metrics.requests.inc({ operation: req.operation, mount, status: String(status) });
      metrics.requestDuration.observe({ operation: req.operation, mount }, seconds);
      metrics.vault.handleRequest.observe(seconds * 1000);
      // The line (and its path redaction) is built only when it goes somewhere: most servers log requests at a level they drop.
      if (level !== 'off' && log.wants(level)) log.log(level, 'request', { method: req.method, path: redactPath(req.urlPath), status, duration_ms: Math.round(seconds * 1e5) / 100, namespace });
    }
  };
}

/** The mount a request is for (with its namespace path), for metrics; '' when none. */
function mountLabel(deps: Pick<RequestObserverDeps, 'namespaces' | 'router'>, path: string): { mount: string; namespace: string } {
  try {
    const r = deps.namespaces.resolve(path);
    const m = deps.router.match(r.namespace.id, r.path);
    return { mount: m ? `${r.namespace.path}${m.mountPath}` : '', namespace: r.namespace.path || 'root' };
  } catch {
    return { mount: '', namespace: '' };
  }
}

/** Path segments that look like tokens (Strongroom's or Vault's prefixes) are masked in logs. */
const TOKEN_SEGMENT = /^(?:sr[sbr]|hv[sbr]|[sbr])\.[A-Za-z0-9_.-]{8,}$/;
function redactPath(path: string): string {
  return path
    .split('/')
    .map((seg) => (TOKEN_SEGMENT.test(seg) ? '<redacted>' : seg))
    .join('/');
}
