export * from './password-policy.js';
export * from './random.js';
