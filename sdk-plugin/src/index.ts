/**
 * `@strongroom/sdk-plugin`: what an engine author imports. Declarations
 * (paths, fields, secrets), the engine kit (records, batches, locks,
 * schedules, scrubbing), errors, `serve` and the test harness. The core's
 * side lives in `@strongroom/sdk-plugin/host`, the database-plugin contract
 * in `@strongroom/sdk-plugin/database`.
 */
export { serve } from './serve.js';
export { defineBackend, definePath, defineSecret, renewedAuth } from './define-backend.js';
export type { BackendDefinition, HandlerRequest, PathDef, SecretTypeDef } from './define-backend.js';
export { f } from './fields.js';
export { StrongroomError, badRequest, notFound, permissionDenied, codedError } from './errors.js';
export type { LogicalResponse } from './logical.js';
export type { BackendFactory, MountEnv } from './backend.js';
export type { Storage, StorageOp } from './storage.js';
export { createRecordStore } from './kit/record-store.js';
export type { RecordStore, Records, SingleRecord } from './kit/record-store.js';
export { createKeyedMutex } from './kit/keyed-mutex.js';
export { createDueScheduler } from './kit/due-scheduler.js';
export { createManualClock } from './kit/clock.js';
export { createRotationScheduler } from './kit/rotation.js';
export type { RotationTarget, RotationScheduler } from './kit/rotation.js';
export { scrubSecrets, redactCredentials } from './kit/scrub.js';
export { createTestBackend, errorOf } from './harness.js';
