import { WardError } from '../core/errors.ts';

/**
 * Parses If-Match (RFC 9110 §13.1.1): `*`, or a list of entity tags whose values are record
 * versions. Missing: 428. A tag that is not a version can never match, so it is simply not listed.
 */
export function parseIfMatch(header: string | string[] | undefined): '*' | number[] {
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value === undefined || value.trim() === '') throw new WardError('PRECONDITION_REQUIRED');
  if (value.trim() === '*') return '*';
  const versions: number[] = [];
  for (const part of value.split(',')) {
    const match = /^\s*(?:W\/)?"(\d{1,15})"\s*$/.exec(part);
    if (match) versions.push(Number(match[1]));
  }
  return versions;
}
