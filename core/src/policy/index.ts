export * from './policy.js';
export * from './acl.js';
export * from './acl-cache.js';
export { DEFAULT_POLICY_TEXT } from './default-policy.js';
