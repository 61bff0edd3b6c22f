export { createUserpassBackend, userpassBackend, type UserpassBackendOptions } from './backend.js';
