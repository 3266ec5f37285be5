// The federation feature's public face (Ward's federation and OpenID Federation): other features import only what this file exports.
export type { ChildRegistries } from './child-registries.ts';
export { issueFederationToken } from './federation-token.ts';
export { refuseIfRevoked } from './revoked-registry.ts';
export type { RegistryRow } from './storage/registry-store.ts';
