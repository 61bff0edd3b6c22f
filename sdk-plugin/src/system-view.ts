/**
 * What an engine may ask of the core besides storage (served over the
 * SystemView stream for plugin processes). Scoped to the calling mount.
 */
export interface SystemView {
  /** Seconds; the mount's tuned value or the system default. */
  defaultLeaseTtl(): Promise<number>;
  maxLeaseTtl(): Promise<number>;
  /** Generate a password from a named password policy (sys/policies/password). */
  generatePasswordFromPolicy(policyName: string): Promise<string>;
  /** Version string of the core. */
  coreVersion(): Promise<string>;
  /**
   * Resolve database plugin `name` at `version` ("" = the built-in or only
   * registered one) and say where it serves: for the built-in version nowhere
   * (`builtin`, the engine runs it in its own process), for any other the
   * process the core started (or found). Only the database engine uses this;
   * the core refuses an unregistered version.
   */
  openDatabasePlugin?(name: string, version: string): Promise<DatabasePluginAddress>;
  /**
   * Publish a change event (`kv-v2/data-write`, `transit/key-rotate`, ...)
   * about `path` (relative to the mount). The core stamps it (id, time,
   * namespace, mount), filters it by each subscriber's ACL and fans it out
   * (sys/events/subscribe). `metadata` is flat and never secret: a version
   * number, a name, never a value. It resolves once the core has taken the
   * event; delivery never waits on a subscriber.
   */
  sendEvent(type: string, path: string, metadata?: EventMetadata): Promise<void>;
}

/** An event's metadata: flat, non-secret values. */
export type EventMetadata = Record<string, string | number | boolean>;

/**
 * A mount's lease TTLs in seconds, as the core resolves them (tuned, else the
 * system's). The core sends them with every request to a plugin process, so
 * the SystemView there answers from the latest instead of asking (issue 20).
 */
export interface MountTtls {
  defaultTtl: number;
  maxTtl: number;
}

/** Where a database plugin serves (SystemView.openDatabasePlugin's answer). */
export interface DatabasePluginAddress {
  /** The process's socket ("" for the built-in). */
  socketPath: string;
  /** The per-process secret to send as `x-strongroom-plugin-secret` on every call ("" for the built-in). */
  secret: string;
  /** The version actually serving (canonical, "v0.1.0+builtin"). */
  version: string;
  /** The built-in version: no process; the database engine runs the plugin's code itself. */
  builtin: boolean;
}

export interface Logger {
  debug(msg: string, meta?: Record<string, unknown>): void;
  info(msg: string, meta?: Record<string, unknown>): void;
  warn(msg: string, meta?: Record<string, unknown>): void;
  error(msg: string, meta?: Record<string, unknown>): void;
}
