/**
 * The server's metrics, kept in a prom-client registry of their own (one per
 * core, so tests may run several) and served by `sys/metrics` in the
 * Prometheus text format or as JSON. Labels never carry secrets or ids: mount
 * paths, operations, status codes, token types, namespace paths, plugin names.
 *
 * Counters and histograms move where things happen; gauges that describe
 * state (leases per mount, tokens, seal, plugin processes) are read from their
 * owners at scrape time through `onScrape`.
 */
import { hostname } from 'node:os';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Request and storage latency buckets, in seconds (ascending, as Prometheus requires). */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const STORAGE_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

export interface MetricsOptions {
  /** Without it, every series has a `host` label (telemetry.disable_hostname). */
  disableHostname?: boolean;
  /** Process and event-loop metrics (RSS, heap, event-loop lag); default true. */
  processMetrics?: boolean;
}

export function createMetrics(opts: MetricsOptions = {}) {
  const registry = new Registry();
  if (!opts.disableHostname) registry.setDefaultLabels({ host: hostname() });
  if (opts.processMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'strongroom_', eventLoopMonitoringPrecision: 20 });
  const registers = [registry];
  const scrapers: Array<() => void | Promise<void>> = [];

  const m = {
    registry,
    requests: new Counter({ name: 'strongroom_requests_total', help: 'Requests handled, by operation, mount and HTTP status code.', labelNames: ['operation', 'mount', 'status'] as const, registers }),
    requestDuration: new Histogram({ name: 'strongroom_request_duration_seconds', help: 'Request latency in seconds, by operation and mount.', labelNames: ['operation', 'mount'] as const, buckets: LATENCY_BUCKETS, registers }),
    leases: new Gauge({ name: 'strongroom_leases', help: 'Leases held, by mount and namespace.', labelNames: ['mount', 'namespace'] as const, registers }),
    leaseExpirations: new Counter({ name: 'strongroom_lease_expirations_total', help: 'Leases revoked because their TTL ran out, by mount and namespace.', labelNames: ['mount', 'namespace'] as const, registers }),
    leaseRevocations: new Counter({ name: 'strongroom_lease_revocations_total', help: 'Leases revoked (expired or asked for), by mount and namespace.', labelNames: ['mount', 'namespace'] as const, registers }),
    leaseIrrevocable: new Counter({ name: 'strongroom_lease_irrevocable_total', help: 'Leases that became irrevocable after repeated failed revocations, by mount and namespace.', labelNames: ['mount', 'namespace'] as const, registers }),
    irrevocableLeases: new Gauge({ name: 'strongroom_leases_irrevocable', help: 'Irrevocable leases held now.', registers }),
    tokens: new Gauge({ name: 'strongroom_tokens', help: 'Stored tokens, by type and namespace (batch tokens are not stored).', labelNames: ['type', 'namespace'] as const, registers }),
    unsealed: new Gauge({ name: 'strongroom_core_unsealed', help: 'Whether this node is unsealed (1) or sealed (0).', registers }),
    haEnabled: new Gauge({ name: 'strongroom_core_ha_enabled', help: 'Whether this node runs with HA storage.', registers }),
    active: new Gauge({ name: 'strongroom_core_active', help: 'Whether this node serves requests itself (1), or is sealed or an HA standby (0).', registers }),
    pluginUp: new Gauge({ name: 'strongroom_plugin_up', help: '1 while the plugin process serves, by plugin and version.', labelNames: ['plugin', 'version'] as const, registers }),
    pluginDegraded: new Gauge({ name: 'strongroom_plugin_degraded', help: '1 when the plugin is degraded after repeated crashes (until reloaded).', labelNames: ['plugin', 'version'] as const, registers }),
    pluginRestarts: new Counter({ name: 'strongroom_plugin_restarts_total', help: 'Restarts of a plugin process after it exited unexpectedly.', labelNames: ['plugin', 'version'] as const, registers }),
    auditFailures: new Counter({ name: 'strongroom_audit_failures_total', help: 'Audit entries an audit device failed to write, by device path.', labelNames: ['device'] as const, registers }),
    barrierDuration: new Histogram({ name: 'strongroom_barrier_duration_seconds', help: 'Barrier (encrypted storage) operation latency in seconds.', labelNames: ['op'] as const, buckets: STORAGE_BUCKETS, registers }),
    storageDuration: new Histogram({ name: 'strongroom_storage_duration_seconds', help: 'Physical storage operation latency in seconds.', labelNames: ['op'] as const, buckets: STORAGE_BUCKETS, registers }),
    /** Runs `fn` before each scrape, to set gauges from their owners. */
    onScrape(fn: () => void | Promise<void>): void {
      scrapers.push(fn);
    },
    async refresh(): Promise<void> {
      for (const fn of scrapers) await fn();
    },
    /** The Prometheus text exposition. */
    async render(): Promise<string> {
      await m.refresh();
      return registry.metrics();
    },
    contentType: registry.contentType,
    async json(): Promise<unknown> {
      await m.refresh();
      return registry.getMetricsAsJSON();
    },
  };

  return m;
}

export type Metrics = ReturnType<typeof createMetrics>;

/** Times an async operation into a histogram with the given labels. */
export async function timed<T>(h: Histogram<string>, labels: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const end = h.startTimer(labels);
  try {
    return await fn();
  } finally {
    end();
  }
}
