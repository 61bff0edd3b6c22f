/**
 * `@strongroom/sdk-plugin/testing`: an engine's tests. The in-process harness
 * (one mount over in-memory storage, no process, no core), storage that fails
 * on demand, and the help and OpenAPI an engine's description produces, to
 * snapshot in a test so API drift shows in review.
 */
export { createTestBackend, errorOf } from './harness.js';
export type { TestBackend, TestBackendOptions } from './harness.js';
export { createMemoryStorage } from './storage.js';
export { createFaultyStore } from './kit/faulty-store.js';
export { helpFor, toOpenApi } from './openapi.js';
