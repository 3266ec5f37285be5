// The signing-keys feature's public face (the registry's signing keys): other features import only what this file exports.
export type { RegistrySigner } from './registry-signer.ts';
