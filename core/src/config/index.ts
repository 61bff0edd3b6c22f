export * from './config.js';
export * from './duration.js';
