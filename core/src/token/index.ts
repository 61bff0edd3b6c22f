export * from './types.js';
export * from './token-store.js';
export * from './schemas.js';
export { parseOrBadRequest, parseDurationSeconds } from './lenient.js';
export { remainingTtl } from './render.js';
