/**
 * `@strongroom/sdk-plugin`: what an engine author imports. Declarations
 * (paths, fields, secrets), the engine kit (records, batches, locks,
 * schedules, scrubbing), errors, `serve` and the test harness. The core's
 * side lives in `@strongroom/sdk-plugin/host`, the database-plugin contract
 * in `@strongroom/sdk-plugin/database`.
 */
export { serve } from './serve.js';
export { defineBackend, definePath, defineSecret } from './define-backend.js';
export type { HandlerRequest, PathDef } from './define-backend.js';
export { f } from './fields.js';
export { StrongroomError, badRequest, notFound, permissionDenied, codedError } from './errors.js';
export type { LogicalResponse } from './logical.js';
export type { BackendFactory } from './backend.js';
export type { Storage } from './storage.js';
export { createRecordStore, rawBytesCodec } from './kit/record-store.js';
export type { RecordStore, Records } from './kit/record-store.js';
export { createKeyedMutex } from './kit/keyed-mutex.js';
export { createDueScheduler } from './kit/due-scheduler.js';
export { createManualClock } from './kit/clock.js';
export { createRotationScheduler, createStaticRoleRotation } from './kit/rotation.js';
export type { RotationTarget, StaticRoleRotation } from './kit/rotation.js';
export { scrubSecrets, redactCredentials } from './kit/scrub.js';
export { compileTemplate, renderTemplate } from './kit/template.js';
export * as tokens from './kit/token-fields.js';
export * as cidr from './kit/cidr.js';
export * as leaseTtl from './kit/lease-ttl.js';
export { createTestBackend, errorOf } from './harness.js';
