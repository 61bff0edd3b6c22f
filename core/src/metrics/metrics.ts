/**
 * The server's metrics, kept in a prom-client registry of their own (one per
 * core, so tests may run several) and served by `sys/metrics` in the
 * Prometheus text format or as JSON. Labels never carry secrets or ids: mount
 * paths, operations, status codes, token types, namespace paths, plugin names.
 *
 * Counters and histograms move where things happen; gauges that describe
 * state (leases per mount, tokens, seal, plugin processes) are read from their
 * owners at scrape time through `onScrape`.
 *
 * Every name starts with the prefix (`telemetry { metrics_prefix }`, default
 * `strongroom`). Beside our own series, the ones Vault's dashboards and alerts
 * read exist under Vault's names, labels and units (timers as summaries in
 * milliseconds, counters without `_total`), so with `metrics_prefix = "vault"`
 * they answer to the same queries; README "Metrics" has the table.
 */
import { hostname } from 'node:os';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { WindowSummary } from './window-summary.js';

/** Request and storage latency buckets, in seconds (ascending, as Prometheus requires). */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const STORAGE_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

/** go-metrics' Prometheus summaries, which Vault's timers are: these quantiles over a 10 s window. */
const VAULT_SUMMARY = { percentiles: [0.5, 0.9, 0.99], maxAgeSeconds: 10, ageBuckets: 5 };

const DEFAULT_METRICS_PREFIX = 'strongroom';

export interface MetricsOptions {
  /** The first part of every series' name (telemetry.metrics_prefix); default `strongroom`. */
  prefix?: string;
  /** Without it, every series has a `host` label (telemetry.disable_hostname). */
  disableHostname?: boolean;
  /** Process and event-loop metrics (RSS, heap, event-loop lag); default true. */
  processMetrics?: boolean;
}

export function createMetrics(opts: MetricsOptions = {}) {
  const registry = new Registry();
  const p = opts.prefix ?? DEFAULT_METRICS_PREFIX;
  if (!opts.disableHostname) registry.setDefaultLabels({ host: hostname() });
  const registers = [registry];
  if (opts.processMetrics !== false) {
    collectDefaultMetrics({ register: registry, prefix: `${p}_`, eventLoopMonitoringPrecision: 20 });
    // Vault's Go runtime gauges, with Node's nearest figures: heap in use, memory held from the OS,
    // and the event loop's live handles and requests where Go counts goroutines.
    new Gauge({ name: `${p}_runtime_alloc_bytes`, help: 'Heap bytes in use (Vault: runtime.alloc_bytes).', registers, collect() { this.set(process.memoryUsage().heapUsed); } });
    new Gauge({ name: `${p}_runtime_sys_bytes`, help: 'Resident memory in bytes (Vault: runtime.sys_bytes).', registers, collect() { this.set(process.memoryUsage().rss); } });
    new Gauge({ name: `${p}_runtime_num_goroutines`, help: 'Active event-loop handles and requests, the analogue of goroutines (Vault: runtime.num_goroutines).', registers, collect() { this.set(process.getActiveResourcesInfo().length); } });
  }
  const scrapers: Array<() => void | Promise<void>> = [];

  const m = {
    registry,
    requests: new Counter({ name: `${p}_requests_total`, help: 'Requests handled, by operation, mount and HTTP status code.', labelNames: ['operation', 'mount', 'status'] as const, registers }),
    requestDuration: new Histogram({ name: `${p}_request_duration_seconds`, help: 'Request latency in seconds, by operation and mount.', labelNames: ['operation', 'mount'] as const, buckets: LATENCY_BUCKETS, registers }),
    leases: new Gauge({ name: `${p}_leases`, help: 'Leases held, by mount and namespace.', labelNames: ['mount', 'namespace'] as const, registers }),
    leaseExpirations: new Counter({ name: `${p}_lease_expirations_total`, help: 'Leases revoked because their TTL ran out, by mount and namespace.', labelNames: ['mount', 'namespace'] as const, registers }),
    leaseRevocations: new Counter({ name: `${p}_lease_revocations_total`, help: 'Leases revoked (expired or asked for), by mount and namespace.', labelNames: ['mount', 'namespace'] as const, registers }),
    leaseIrrevocable: new Counter({ name: `${p}_lease_irrevocable_total`, help: 'Leases that became irrevocable after repeated failed revocations, by mount and namespace.', labelNames: ['mount', 'namespace'] as const, registers }),
    irrevocableLeases: new Gauge({ name: `${p}_leases_irrevocable`, help: 'Irrevocable leases held now.', registers }),
    tokens: new Gauge({ name: `${p}_tokens`, help: 'Stored tokens, by type and namespace (batch tokens are not stored).', labelNames: ['type', 'namespace'] as const, registers }),
    unsealed: new Gauge({ name: `${p}_core_unsealed`, help: 'Whether this node is unsealed (1) or sealed (0).', registers }),
    haEnabled: new Gauge({ name: `${p}_core_ha_enabled`, help: 'Whether this node runs with HA storage.', registers }),
    active: new Gauge({ name: `${p}_core_active`, help: 'Whether this node serves requests itself (1), or is sealed or an HA standby (0).', registers }),
    pluginUp: new Gauge({ name: `${p}_plugin_up`, help: '1 while the plugin process serves, by plugin and version.', labelNames: ['plugin', 'version'] as const, registers }),
    pluginDegraded: new Gauge({ name: `${p}_plugin_degraded`, help: '1 when the plugin is degraded after repeated crashes (until reloaded).', labelNames: ['plugin', 'version'] as const, registers }),
    pluginRestarts: new Counter({ name: `${p}_plugin_restarts_total`, help: 'Restarts of a plugin process after it exited unexpectedly.', labelNames: ['plugin', 'version'] as const, registers }),
    haStandbyRequests: new Counter({
      name: `${p}_ha_standby_requests_total`,
      help: 'Requests a standby handled: served itself (wrote nothing), or forwarded to the active node and why (write: a storage write was refused; index: not caught up with the X-Service-Index asked for; always: a path only the active node serves; error: failed here; unready: its state is not built yet).',
      labelNames: ['outcome'] as const,
      registers,
    }),
    eventsPublished: new Counter({ name: `${p}_events_published_total`, help: 'Change events published, by event type.', labelNames: ['event_type'] as const, registers }),
    eventsDropped: new Counter({ name: `${p}_events_dropped_total`, help: 'Change events a slow subscriber lost (its buffer was full); each loss is announced to it as a dropped notice.', registers }),
    eventSubscribers: new Gauge({ name: `${p}_events_subscribers`, help: 'Open change-event streams on this node.', registers }),
    eventQueueMax: new Gauge({ name: `${p}_events_subscriber_queue_max`, help: 'The most events one subscriber has had waiting since the start (bounded by the subscriber buffer).', registers }),
    auditFailures: new Counter({ name: `${p}_audit_failures_total`, help: 'Audit entries an audit device failed to write, by device path.', labelNames: ['device'] as const, registers }),
    quotaRateLimitViolations: new Counter({ name: `${p}_quota_rate_limit_violation`, help: 'Requests refused by a rate-limit quota, by quota name and the namespace holding it (Vault: quota.rate_limit.violation).', labelNames: ['name', 'namespace'] as const, registers }),
    quotaLeaseCountViolations: new Counter({ name: `${p}_quota_lease_count_violation`, help: 'Requests refused by a lease-count quota, by quota name and namespace (Vault: quota.lease_count.violation).', labelNames: ['name', 'namespace'] as const, registers }),
    quotaLeaseCount: new Gauge({ name: `${p}_quota_lease_count_counter`, help: 'Leases counted under a lease-count quota, by quota name and namespace (Vault: quota.lease_count.counter).', labelNames: ['name', 'namespace'] as const, registers }),
    quotaLeaseCountMax: new Gauge({ name: `${p}_quota_lease_count_max`, help: 'A lease-count quota\'s max_leases, by quota name and namespace (Vault: quota.lease_count.max).', labelNames: ['name', 'namespace'] as const, registers }),
    barrierDuration: new Histogram({ name: `${p}_barrier_duration_seconds`, help: 'Barrier (encrypted storage) operation latency in seconds.', labelNames: ['op'] as const, buckets: STORAGE_BUCKETS, registers }),
    storageDuration: new Histogram({ name: `${p}_storage_duration_seconds`, help: 'Physical storage operation latency in seconds.', labelNames: ['op'] as const, buckets: STORAGE_BUCKETS, registers }),
    snapshotLastSuccess: new Gauge({ name: `${p}_snapshot_last_success_timestamp_seconds`, help: 'Unix time of the last scheduled snapshot written (0: none yet).', registers }),
    // Vault's names (the prefix decides the first part): see the file's header.
    vault: {
      handleRequest: new WindowSummary({ name: `${p}_core_handle_request`, help: 'Request handling time in milliseconds (Vault: core.handle_request).', ...VAULT_SUMMARY, registers }),
      numLeases: new Gauge({ name: `${p}_expire_num_leases`, help: 'Leases held (Vault: expire.num_leases).', registers }),
      numIrrevocableLeases: new Gauge({ name: `${p}_expire_num_irrevocable_leases`, help: 'Irrevocable leases held (Vault: expire.num_irrevocable_leases).', registers }),
      tokenCount: new Gauge({ name: `${p}_token_count`, help: 'Stored tokens by namespace (Vault: token.count).', labelNames: ['namespace'] as const, registers }),
      auditRequestFailure: new Counter({ name: `${p}_audit_log_request_failure`, help: 'Request audit entries an audit device failed to write (Vault: audit.log_request_failure).', registers }),
      auditResponseFailure: new Counter({ name: `${p}_audit_log_response_failure`, help: 'Response audit entries an audit device failed to write (Vault: audit.log_response_failure).', registers }),
      barrier: {
        get: new WindowSummary({ name: `${p}_barrier_get`, help: 'Barrier read time in milliseconds (Vault: barrier.get).', ...VAULT_SUMMARY, registers }),
        put: new WindowSummary({ name: `${p}_barrier_put`, help: 'Barrier write time in milliseconds (Vault: barrier.put).', ...VAULT_SUMMARY, registers }),
        delete: new WindowSummary({ name: `${p}_barrier_delete`, help: 'Barrier delete time in milliseconds (Vault: barrier.delete).', ...VAULT_SUMMARY, registers }),
        list: new WindowSummary({ name: `${p}_barrier_list`, help: 'Barrier list time in milliseconds (Vault: barrier.list).', ...VAULT_SUMMARY, registers }),
      },
    },
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
