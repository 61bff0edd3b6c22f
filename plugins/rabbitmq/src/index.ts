export { createRabbitmqBackend, rabbitmqBackend, type RabbitmqBackendOptions } from './backend.js';
export { createManagementClient, normalizeBaseUri, type ManagementClient, type ManagementConnection } from './management-client.js';
