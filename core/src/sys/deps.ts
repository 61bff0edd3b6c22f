/**
 * What the system backend (sys/) needs from the core. Narrow on purpose: a
 * test hands in fakes of exactly these.
 */
import type { MountManager } from '../mounts/mount-manager.js';
import type { MountEntry } from '../mounts/mount-table.js';
import type { NamespaceRegistry, Namespace } from '../namespace/namespaces.js';
import type { AuditBroker } from '../audit/broker.js';
import type { Metrics } from '../metrics/metrics.js';
import type { CoreLogger } from '../log/logger.js';
import type { MountTtls, OpenApiDocument, PathDef } from '@strongroom/sdk-plugin/host';
import type { PasswordPolicyStore } from '../password-policy/store.js';
import type { PluginCatalog } from '../catalog/catalog.js';
import type { TokenEntry } from '../token/index.js';
import type { SysPathDef } from './sys-path.js';

export interface PolicyStorePort {
  list(ns: Namespace): Promise<string[]>;
  get(ns: Namespace, name: string): Promise<string | null>;
  put(ns: Namespace, name: string, text: string): Promise<void>;
  delete(ns: Namespace, name: string): Promise<void>;
}

/**
 * A token's capabilities, always evaluated as the pipeline does: with its own
 * namespace's policies, and none outside its namespace and the ones below.
 */
export interface CapabilitiesPort {
  /** Capabilities of the calling token (its entry as the pipeline handed it over: batch tokens have no accessor to look up). */
  forEntry(entry: TokenEntry | null | undefined, ns: Namespace, path: string): Promise<string[]>;
  /** Capabilities of the token with this accessor on a namespace-relative path. */
  forAccessor(accessor: string, ns: Namespace, path: string): Promise<string[]>;
  /** Capabilities of a token given by id. */
  forToken(token: string, ns: Namespace, path: string): Promise<string[]>;
  /** Whether the token has some capability at or below a mount's path (sys/internal/ui/mounts shows only those mounts). */
  seesMount(entry: TokenEntry | null | undefined, ns: Namespace, mountPath: string): Promise<boolean>;
}

export interface PluginCatalogPort extends Pick<PluginCatalog, 'list' | 'get' | 'register' | 'remove'> {
  /**
   * Replaces the processes of a plugin (only those of `version` when given) by fresh
   * ones and switches its mounts to them; rejects, switching nothing, when one fails to start.
   */
  reload(name: string, version?: string): Promise<void>;
}

/** What sys/namespaces needs beyond the registry: the core makes and removes namespaces. */
export interface NamespaceAdminPort {
  create(parent: Namespace, name: string, customMetadata: Record<string, string>): Promise<Namespace>;
  patch(ns: Namespace, changes: Record<string, string | null>): Promise<Namespace>;
  /** Refuses while children exist; otherwise starts the removal and resolves once the namespace no longer resolves. */
  delete(ns: Namespace): Promise<void>;
  children(parent: Namespace): Namespace[];
  /** The namespace at this full path, including one whose deletion is under way. */
  find(path: string): Namespace | undefined;
}

export interface SysDeps {
  mounts: MountManager;
  namespaces: NamespaceRegistry;
  policies: PolicyStorePort;
  passwordPolicies: PasswordPolicyStore;
  capabilities: CapabilitiesPort;
  catalog: PluginCatalogPort;
  audit: AuditBroker;
  metrics: Metrics;
  /** Seconds; 0: the Prometheus format of sys/metrics is off (telemetry.prometheus_retention_time). */
  prometheusRetentionTime: number;
  /** The server's root logger: sys/loggers changes its levels, sys/monitor taps it. */
  logger: CoreLogger;
  /** The requests this node is serving (sys/in-flight-req). */
  inFlight(): Record<string, unknown>;
  /** Directories whose filesystems sys/host-info lists beside / (the storage's). */
  hostPaths: string[];
  /** A mount's effective lease TTLs: its own, else the system's (what tune reads show). */
  ttlsOf(entry: MountEntry): MountTtls;
  seal(): Promise<void>;
  /** Makes an HA active node give up the lock (after this request is answered); no effect without HA. */
  stepDown(): Promise<void>;
  rotate(): Promise<{ term: number }>;
  keyStatus(): { term: number; install_time: string; encryptions: number };
  openapi(ns: Namespace): Promise<OpenApiDocument>;
  /** Node-level info for seal-status. */
  node: { clusterName: string; clusterId: () => string; apiAddr: string; version: string };
  /** Creates and deletes namespaces (sys/namespaces). */
  namespaceAdmin: NamespaceAdminPort;
  /** Lease endpoints (sys/leases/*), mounted when the expiration manager is present. */
  extraPaths?: SysPathDef[];
}
