export * from './types.js';
export * from './client.js';
export * from './serve-database.js';
export * from './test-process.js';
