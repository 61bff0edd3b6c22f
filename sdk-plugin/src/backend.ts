/**
 * The runtime contract between the core and one mount of an engine. The SDK's
 * `defineBackend` builds a BackendFactory from declarations; `serve()` exposes
 * a factory over gRPC; the core's plugin client implements the same interface
 * on its side, so the core cannot tell an in-process backend (sys/, token) from
 * a plugin process.
 */
import type { ExistenceResult, LogicalRequest, LogicalResponse, MountInfo, SpecialPaths } from './logical.js';
import type { Storage } from './storage.js';
import type { Logger, SystemView } from './system-view.js';
import type { BackendDescription } from './describe.js';

export type BackendType = 'secret' | 'auth' | 'database';

export interface MountEnv {
  mount: MountInfo;
  storage: Storage;
  system: SystemView;
  logger: Logger;
}

export interface Backend {
  handleRequest(req: LogicalRequest): Promise<LogicalResponse | null>;
  existenceCheck(req: LogicalRequest): Promise<ExistenceResult>;
  specialPaths(): SpecialPaths;
  describe(): BackendDescription;
  invalidateKey(key: string): Promise<void>;
  /** Run periodic work (rotation, tidy); the core calls it about once a minute. */
  periodic(): Promise<void>;
  cleanup(): Promise<void>;
}

export interface BackendFactory {
  type: BackendType;
  /** Builds one mount's backend. Called on mount and on every plugin (re)start. */
  create(env: MountEnv): Promise<Backend>;
}
