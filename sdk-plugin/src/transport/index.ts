export * from './codec.js';
export * from './handshake.js';
export * from './mux.js';
export * from './proto.js';
export * from './logger.js';
export * from './callback-client.js';
export * from './callback-server.js';
export * from './backend-client.js';
