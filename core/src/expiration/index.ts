export * from './clock.js';
export * from './lease-entry.js';
export * from './expiration-manager.js';
