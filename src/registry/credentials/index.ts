// The credentials feature's public face (API keys and the authentication modes): other features import only what this file exports.
export type { ApiKeyService } from './api-key-service.ts';
export { requiredScope } from './route-scopes.ts';
export { findApiKey } from './storage/api-key-store.ts';
