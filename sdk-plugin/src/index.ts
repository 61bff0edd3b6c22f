export * from './logical.js';
export * from './errors.js';
export * from './storage.js';
export * from './system-view.js';
export * from './backend.js';
export * from './describe.js';
