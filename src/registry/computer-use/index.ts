// The computer-use feature's public face (computer-use runs): other features import only what this file exports.
export { countRunsByStatus, listRunIdsOpening } from './storage/computer-use-store.ts';
