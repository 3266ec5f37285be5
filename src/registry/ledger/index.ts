// The ledger feature's public face (the transparency ledger): other features import only what this file exports.
export type { LedgerService, SignedTreeHead } from './ledger-service.ts';
