import { stringify } from 'safe-stable-stringify';

/**
 * Event types that record an observation rather than a change anyone made to the registry: they are
 * streamed but not appended to the transparency ledger. Everything else is a mutation and is
 * ledgered, so a new event type is in the ledger unless someone decides otherwise here.
 * (`agent.health_changed` comes from the health prober and can change every few seconds.)
 */
export const LEDGER_EXCLUDED_EVENT_TYPES: ReadonlySet<string> = new Set(['agent.health_changed']);

/** Whether events of this type become ledger leaves (contract §6: every registry mutation). */
export function isLedgerEventType(type: string): boolean {
  return !LEDGER_EXCLUDED_EVENT_TYPES.has(type);
}

/** What a ledger leaf says: the committed event, exactly as the stream delivers it. */
export type LedgerEntryContent = {
  seq: number;
  type: string;
  subject: string;
  occurred_at: string;
  data: Record<string, unknown>;
};

/**
 * The leaf's bytes are the UTF-8 of this canonical JSON: object keys sorted by UTF-16 code units,
 * no insignificant whitespace, numbers and strings as `JSON.stringify` writes them — RFC 8785 (JCS)
 * for the values events carry (strings, integers, booleans, null, arrays, objects). Event data never
 * holds secrets or PHI (the emitters' rule), so neither does the ledger.
 */
export function encodeLedgerEntry(content: LedgerEntryContent): string {
  const { seq, type, subject, occurred_at, data } = content;
  const text = stringify({ seq, type, subject, occurred_at, data });
  if (typeof text !== 'string') throw new Error('a ledger entry must be JSON-serialisable');
  return text;
}

/**
 * `typ` of a signed tree head's JWS. The registry signs other statements with the same key (its
 * metadata, responses), so a verifier insists on this type: nothing else can pass for a tree head.
 */
export const STH_JWS_TYPE = 'ward-sth+jws';
