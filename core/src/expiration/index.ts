export * from './lease-entry.js';
export * from './expiration-manager.js';
