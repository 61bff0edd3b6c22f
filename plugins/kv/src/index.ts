export { createKvBackend, kvBackend, type KvBackendOptions } from './backend.js';
