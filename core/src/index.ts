export * from './storage/physical.js';
