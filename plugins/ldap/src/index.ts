export { createLdapBackend, ldapBackend, type LdapBackendOptions } from './backend.js';
