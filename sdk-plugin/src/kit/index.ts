export * from './keyed-mutex.js';
export * from './clock.js';
export * from './due-heap.js';
export * from './due-scheduler.js';
export * from './read-cache.js';
export * from './record-store.js';
export * from './scrub.js';
export * from './rotation.js';
