import { WardError } from '../core/errors.ts';

/**
 * Opaque pagination cursors: base64url of `<kind>:<position>`. The kind stops a cursor from one
 * listing being replayed against another; anything undecodable is a 422 on the `cursor` parameter.
 */
export function encodeCursor(kind: string, position: string): string {
  return Buffer.from(`${kind}:${position}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string, kind: string): string {
  const decoded = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const prefix = `${kind}:`;
  if (!decoded.startsWith(prefix) || decoded.length === prefix.length) {
    throw new WardError('VALIDATION_ERROR', 'The cursor is not one this listing issued.', {
      errors: [{ in: 'query', pointer: '/cursor', reason: 'unknown cursor' }],
    });
  }
  return decoded.slice(prefix.length);
}
