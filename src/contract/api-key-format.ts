import { createHmac, randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 43 base62 characters carry about 256 bits. */
const SECRET_LENGTH = 43;
export const RAW_KEY_PATTERN = /^rk_[0-9A-Za-z]{32,128}$/;

/** A new raw API key, `rk_<43 base62 characters>` (contract §7: at least 32). Uniform: rejection sampling. */
export function generateRawKey(): string {
  let out = '';
  while (out.length < SECRET_LENGTH) {
    for (const byte of randomBytes(64)) {
      if (byte < 248 && out.length < SECRET_LENGTH) out += BASE62[byte % 62];
    }
  }
  return `rk_${out}`;
}

/** What lists show of a key: enough to recognise it, far too little to use it. */
export function keyPrefix(rawKey: string): string {
  return rawKey.slice(0, 11);
}

/**
 * The only form in which a key is stored: HMAC-SHA-256 under a registry secret, so a copy of the
 * database alone does not let anyone test guesses offline.
 */
export function hashKey(rawKey: string, secret: Buffer): string {
  return createHmac('sha256', secret).update(rawKey).digest('hex');
}
