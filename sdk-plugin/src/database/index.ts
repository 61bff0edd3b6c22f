export * from './types.js';
export * from './client.js';
export * from './serve-database.js';
export * from './test-process.js';
export * from './statements.js';
export * from './sql-config.js';
export * from './sql-instance.js';
export * from './in-process.js';
