/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): `traceparent` is
 * `00-<trace-id 32 hex>-<parent-id 16 hex>-<flags 2 hex>`. Each hop keeps the trace id and puts its
 * own span id as the parent, so one trace follows a request through gateway and agents.
 */
import { randomUUID } from 'node:crypto';

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

export type TraceParent = { readonly traceId: string; readonly parentId: string; readonly flags: string };

/** Parses a `traceparent` header; undefined for a missing or invalid one (all-zero ids are invalid). */
export function parseTraceparent(header: string | undefined): TraceParent | undefined {
  const match = TRACEPARENT.exec(header?.trim().toLowerCase() ?? '');
  if (!match) return undefined;
  const [, version, traceId, parentId, flags] = match as unknown as [string, string, string, string, string];
  if (version === 'ff' || /^0+$/.test(traceId) || /^0+$/.test(parentId)) return undefined;
  return { traceId, parentId, flags };
}

/** Random hex from `randomUUID`, whose entropy is drawn in batches (ids are made on every request). */
function randomHex(length: 16 | 32): string {
  const hex = randomUUID().replaceAll('-', '');
  return length === 32 ? hex : hex.slice(16);
}

/** The `traceparent` this hop sends on: same trace (or a new one), a fresh span id as parent. */
export function nextTraceparent(incoming: string | undefined): string {
  const parent = parseTraceparent(incoming);
  const traceId = parent?.traceId ?? randomHex(32);
  return `00-${traceId}-${randomHex(16)}-${parent?.flags ?? '01'}`;
}
