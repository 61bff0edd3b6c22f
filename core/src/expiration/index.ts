export { createManualClock, systemClock, type Clock, type ManualClock } from '@strongroom/sdk-plugin/host';
export * from './lease-entry.js';
export * from './expiration-manager.js';
