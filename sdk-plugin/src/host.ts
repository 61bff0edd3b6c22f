/**
 * `@strongroom/sdk-plugin/host`: the core's side. The host end of the wire
 * (plugin processes, the callback server, the codec) and the framework's
 * internals the core's own in-process backends (sys/, auth/token/) and its
 * OpenAPI document are built from. An engine imports the root entry instead.
 */
export * from './logical.js';
export * from './errors.js';
export * from './storage.js';
export * from './system-view.js';
export * from './backend.js';
export * from './describe.js';
export * from './fields.js';
export * from './pattern.js';
export * from './paginate.js';
export * from './define-backend.js';
export * from './password-policy/index.js';
export * from './openapi.js';
export * from './harness.js';
export * from './kit/index.js';
export * from './transport/index.js';
export * from './tool-paths.js';
export * from './base64.js';
