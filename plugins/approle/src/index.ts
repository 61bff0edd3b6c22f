export { createApproleBackend, approleBackend, type ApproleBackendOptions } from './backend.js';
