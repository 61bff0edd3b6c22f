export { createTransitFactory, type TransitOptions } from './backend.js';
import { createTransitFactory } from './backend.js';

/** The transit engine's factory, as `serve()` and the in-process harness take it. */
export const transitFactory = createTransitFactory();
