/**
 * Pages of FHIR resources drawn from pages of something else (agents, owners), where one item gives
 * zero or more resources: an agent its Device, or its endpoints that match. The page token says where
 * the next page starts — the source's own cursor, the items of that source page already shown, and
 * the resources of the next item already shown — so a page can end in the middle of an agent and
 * the next begin where it stopped, every resource shown exactly once.
 *
 * Items that give nothing (filtered out after the store's own filters) are skipped; one request reads
 * at most {@link MAX_ITEMS_READ} items, and answers a shorter page with a `next` link past them rather
 * than read on (FHIR lets a page hold fewer than `_count`).
 */
import { WardError } from '../../core/errors.ts';
import { decodeCursor, encodeCursor } from '../../contract/cursor.ts';
import type { FhirResource } from './fhir-resources.ts';

export const MAX_ITEMS_READ = 1000;

export type ItemSource = {
  /** A page of items after `cursor` (undefined: from the start); `next` undefined at the end. */
  page(cursor: string | undefined, limit: number): Promise<{ items: FhirResource[][]; next: string | undefined }>;
};

type Position = { cursor: string | undefined; skipItems: number; skipResources: number };

function encodeToken(kind: string, position: Position): string {
  return encodeCursor(kind, JSON.stringify([position.cursor ?? null, position.skipItems, position.skipResources]));
}

const unknownToken = () =>
  new WardError('BAD_REQUEST', 'The _page_token is not one this search issued.', { errors: [{ in: 'query', pointer: '/_page_token', reason: 'unknown page token' }] });

function decodeToken(kind: string, token: string): Position {
  let parsed: unknown;
  try {
    parsed = JSON.parse(decodeCursor(token, kind));
  } catch {
    throw unknownToken();
  }
  const [cursor, skipItems, skipResources] = Array.isArray(parsed) ? parsed : [];
  // A page holds at most 100 items and an agent at most a few dozen endpoints: a token past that was not written here.
  if ((cursor !== null && typeof cursor !== 'string') || !Number.isSafeInteger(skipItems) || !Number.isSafeInteger(skipResources) || skipItems < 0 || skipResources < 0 || skipItems > 100 || skipResources > 1000) {
    throw unknownToken();
  }
  return { cursor: cursor ?? undefined, skipItems, skipResources };
}

/** Up to `count` resources from `token` on (the start without one), and the token of the page after, if any. */
export async function collectPage(source: ItemSource, kind: string, count: number, token: string | undefined): Promise<{ resources: FhirResource[]; next: string | undefined }> {
  let position: Position = token === undefined ? { cursor: undefined, skipItems: 0, skipResources: 0 } : decodeToken(kind, token);
  const resources: FhirResource[] = [];
  let read = 0;
  while (read < MAX_ITEMS_READ) {
    // Enough items to get past those already shown, and a page's worth after them.
    const { items, next } = await source.page(position.cursor, Math.max(Math.min(100, count), position.skipItems + 1));
    for (let index = position.skipItems; index < items.length; index += 1) {
      read += 1;
      const skip = index === position.skipItems ? position.skipResources : 0;
      const given = (items[index] as FhirResource[]).slice(skip);
      const room = count - resources.length;
      if (given.length > room) {
        resources.push(...given.slice(0, room));
        return { resources, next: encodeToken(kind, { cursor: position.cursor, skipItems: index, skipResources: skip + room }) };
      }
      resources.push(...given);
      if (resources.length === count) {
        if (index + 1 < items.length) return { resources, next: encodeToken(kind, { cursor: position.cursor, skipItems: index + 1, skipResources: 0 }) };
        return { resources, next: next === undefined ? undefined : encodeToken(kind, { cursor: next, skipItems: 0, skipResources: 0 }) };
      }
    }
    if (next === undefined) return { resources, next: undefined };
    position = { cursor: next, skipItems: 0, skipResources: 0 };
  }
  return { resources, next: encodeToken(kind, position) };
}

/** Every resource the source gives, for a count; undefined past `limit` items (too many to count here). */
export async function countAll(source: ItemSource, limit: number): Promise<number | undefined> {
  let cursor: string | undefined;
  let total = 0;
  let read = 0;
  do {
    const { items, next } = await source.page(cursor, 100);
    read += items.length;
    if (read > limit) return undefined;
    for (const item of items) total += item.length;
    cursor = next;
  } while (cursor !== undefined);
  return total;
}
