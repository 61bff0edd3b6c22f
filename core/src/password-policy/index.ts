export * from './password-policy.js';
export * from './store.js';
