// The metering feature's public face (rate limits and usage): other features import only what this file exports.
export { UNITS_PER_TOKEN, hasToken, refill, takeToken } from './token-bucket.ts';
export type { Bucket } from './token-bucket.ts';
