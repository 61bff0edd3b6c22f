export { createSshBackend, sshBackend } from './backend.js';
