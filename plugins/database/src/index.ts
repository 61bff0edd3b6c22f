export { createDatabaseBackend, databaseBackend, type DatabaseBackendOptions } from './backend.js';
