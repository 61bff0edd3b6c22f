/**
 * `@strongroom/sdk-plugin`: the whole of what an engine author imports.
 * Declarations (paths, fields, secrets, login renewal), the types a handler
 * and a setup see, the engine kit (records, batches, locks, schedules,
 * rotation, templates, passwords, scrubbing), errors, `serve`, and `z` (the
 * zod the field helpers are built on, so an engine's schemas and the SDK's
 * share one copy). The in-process harness is `@strongroom/sdk-plugin/testing`,
 * the database-plugin contract `@strongroom/sdk-plugin/database`; the core's
 * side of the wire (`/host`) is not for engines (test/structure checks it).
 */
export { z } from 'zod';
export { serve } from './serve.js';

// Declarations and what handlers see.
export { defineBackend, definePath, defineSecret, renewedAuth, scanStorage } from './define-backend.js';
export type { BackendSpec, FieldValues, HandlerRequest, PathDef, SecretHandler, SecretTypeDef } from './define-backend.js';
export type { BackendFactory, MountEnv } from './backend.js';
export type { AclRequirement } from './describe.js';
export type { ClientInfo, LoginAlias, LogicalResponse, RequestAuth, SecretRef } from './logical.js';
export type { EventMetadata, Logger, SystemView } from './system-view.js';
export { getJSON, MAX_BATCH_OPS, putJSON } from './storage.js';
export type { ListPage, Storage, StorageOp } from './storage.js';

// Fields and the pure parsers behind them.
export { f, FieldParseError, formatGoDuration, parseBase64, parseBool, parseCommaIntList, parseCommaList, parseDuration, parseInteger, parseMap } from './fields.js';
export { isRawUrlBase64, isStdBase64 } from './base64.js';

// Errors.
export { StrongroomError, badRequest, notFound, permissionDenied, codedError } from './errors.js';

// The engine kit.
export { createRecordStore, rawBytesCodec, readRecord } from './kit/record-store.js';
export type { ListOptions, RecordCodec, RecordKindOptions, RecordStore, Records, SingleRecord } from './kit/record-store.js';
export { publishEvent } from './kit/events.js';
export { createKeyedMutex } from './kit/keyed-mutex.js';
export type { KeyedMutex } from './kit/keyed-mutex.js';
export { createDueScheduler } from './kit/due-scheduler.js';
export { createManualClock } from './kit/clock.js';
export { createRotationScheduler, createStaticRoleRotation, staticCredentialPaths } from './kit/rotation.js';
export type { RotationTarget, StaticRoleRotation } from './kit/rotation.js';
export { scrubSecrets, redactCredentials } from './kit/scrub.js';
export { compileTemplate, renderTemplate, validateTemplate, utf16le } from './kit/template.js';
export type { CompiledTemplate } from './kit/template.js';
export { fillRandom, randomBase62, takeRandom } from './kit/random.js';
export { defaultPasswordPolicy, generatePassword, passwordPolicy, satisfiesPolicy } from './password-policy/index.js';
export type { PasswordPolicy } from './password-policy/index.js';
export * as tokens from './kit/token-fields.js';
export * as cidr from './kit/cidr.js';
export * as leaseTtl from './kit/lease-ttl.js';

// Keyless tools (transit's hash and random, the core's sys/tools).
export { HASH_ALGORITHMS, HASH_ENDPOINT_ALGORITHMS, hashToolPath, isHashAlgorithm, nodeHash, randomToolPath } from './tool-paths.js';
export type { HashAlgorithm } from './tool-paths.js';
