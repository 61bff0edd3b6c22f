export * from './types.js';
export * from './token-store.js';
export * from './schemas.js';
;
