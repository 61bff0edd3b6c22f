/**
 * The server's resolved configuration, from `--dev` flags or a config file
 * (HCL or JSON, parsed and validated by core/src/config).
 */
import { builtUiDirectory } from '../http/ui.js';
import type { LogLevel } from '../log/logger.js';
import { storageHaEnabled, type StorageConfig } from '../storage/registry.js';
import type { StaticSeal } from '../seal/static-seal.js';

export interface ListenerConfig {
  address: string;
  tls: { certFile: string; keyFile: string } | null;
  maxRequestSize: number;
  requireRequestHeader: boolean;
  /** The unauthenticated sys/generate-root/* and sys/rekey/* are refused on this listener (absent: served). */
  disableUnauthedGenerateRootEndpoints?: boolean;
  disableUnauthedRekeyEndpoints?: boolean;
  /** sys/metrics is served here without a token (listener telemetry.unauthenticated_metrics_access). */
  unauthenticatedMetricsAccess?: boolean;
}

export interface ServerConfig {
  listeners: ListenerConfig[];
  storage: StorageConfig;
  pluginDirectory: string | null;
  logLevel: LogLevel;
  /** Seconds. */
  defaultLeaseTtl: number;
  maxLeaseTtl: number;
  clusterName: string;
  apiAddr: string;
  /** Revocation retry schedule; absent keys keep the expiration manager's defaults. */
  leaseRevocation: { retryBaseMs?: number; maxAttempts?: number };
  logFormat?: 'standard' | 'json';
  logFile?: string;
  /** Level of the request log line (default debug), or off. */
  logRequestsLevel?: LogLevel | 'off';
  telemetry: { prometheusRetentionTime: number; disableHostname: boolean; metricsPrefix?: string };
  /** Serve the web UI at /ui/ (`ui = true`; on in dev mode). */
  ui?: boolean;
  /** Scheduled snapshots (`snapshot` block): one every `intervalMs` into `path`, the newest `retain` kept. */
  snapshot?: { intervalMs: number; path: string; retain: number };
  /** HA standbys forward every request instead of serving those that write nothing (`disable_standby_reads = true`). */
  disableStandbyReads?: boolean;
  /** The change-event log and subscriber buffers (`events` block); absent keys keep the defaults. */
  events?: { logMaxEvents?: number; logMaxAgeMs?: number; subscriberBuffer?: number };
  /** Dev servers only: plugin processes run unsandboxed and write CPU profiles here (see the supervisor). */
  pluginCpuProfileDir?: string;
  /** `seal "static"`, its keys read; absent: Shamir. */
  seal?: StaticSeal;
}

/** Telemetry when the config sets none (Vault's defaults). */
export const DEFAULT_TELEMETRY = { prometheusRetentionTime: 24 * 3600, disableHostname: false };

export async function loadServerConfig(file: string): Promise<ServerConfig> {
  // Loaded lazily so the dev server does not pay for the HCL parser.
  const { loadConfig } = require('../config/config.js') as typeof import('../config/config.js');
  const c = await loadConfig(file);
  return fromFileConfig(c);
}

function fromFileConfig(c: import('../config/config.js').Config): ServerConfig {
  const apiAddr = c.apiAddr ?? '';
  if (storageHaEnabled(c.storage) && apiAddr === '') {
    // Standbys forward to, and redirect clients to, the active node's api_addr: without it they cannot.
    throw new Error(`api_addr: is required with storage "${c.storage.type}" { ha_enabled = true } (the address other nodes and clients reach this node at)`);
  }
  if (c.ui && !builtUiDirectory()) throw new Error('ui: the web UI is not built (the ui workspace has no dist/: run npm install)');
  return {
    listeners: c.listeners.map((l) => ({
      address: l.address,
      tls: l.tlsDisable ? null : { certFile: l.tlsCertFile!, keyFile: l.tlsKeyFile! },
      maxRequestSize: l.maxRequestSize,
      requireRequestHeader: l.requireRequestHeader,
      disableUnauthedGenerateRootEndpoints: l.disableUnauthedGenerateRootEndpoints,
      disableUnauthedRekeyEndpoints: l.disableUnauthedRekeyEndpoints,
      ...(l.unauthenticatedMetricsAccess ? { unauthenticatedMetricsAccess: true } : {}),
    })),
    storage: c.storage,
    pluginDirectory: c.pluginDirectory ?? null,
    logLevel: c.logLevel,
    defaultLeaseTtl: c.defaultLeaseTtl,
    maxLeaseTtl: c.maxLeaseTtl,
    clusterName: c.clusterName ?? '',
    apiAddr,
    leaseRevocation: c.leaseRevocation,
    telemetry: c.telemetry,
    ui: c.ui,
    ...(c.snapshot ? { snapshot: c.snapshot } : {}),
    ...(c.disableStandbyReads ? { disableStandbyReads: true } : {}),
    events: c.events,
    ...(c.logFormat ? { logFormat: c.logFormat } : {}),
    ...(c.logFile ? { logFile: c.logFile } : {}),
    ...(c.logRequestsLevel ? { logRequestsLevel: c.logRequestsLevel } : {}),
    ...(c.staticSeal ? { seal: c.staticSeal } : {}),
  };
}
