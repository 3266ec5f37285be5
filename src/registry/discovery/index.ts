// The discovery feature's public face (discovery and routing advice): other features import only what this file exports.
export type { DiscoveryService } from './discovery-service.ts';
export { createResponseCache } from './response-cache.ts';
