import { createHash } from 'node:crypto';
import { stringify } from 'safe-stable-stringify';
import { scanTextForPhi } from './phi/index.ts';

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

/** What a ledger leaf is made from: the committed event, as the stream delivers it. */
export type LedgerEntryContent = {
  seq: number;
  type: string;
  subject: string;
  occurred_at: string;
  data: Record<string, unknown>;
};

/**
 * Event data members whose values a leaf keeps as they are: identifiers, versions, states, counts,
 * times and digests. Every other value, and any kept one that is not a plain token or that the PHI
 * guard would refuse, is written as `sha256:<hex of its UTF-8>`. An append-only log cannot forget, so
 * it holds no free text (names, reasons, URLs, personas) that a later, better guard would refuse:
 * safe by construction, whatever an emitter puts in its event (docs/transparency.md).
 */
const KEPT_MEMBERS =
  /^(?:agent_id|level|from|to|registry_id|parent_id|org_id|key_id|previous_key_id|session_id|kids?|alg|version|status|state|tier|jurisdiction|source|turns?|max_turns|headless|model|scopes|key_prefix|requested_by|canceled_by|action|blocked_kind|count|seq|[a-z_]+_sha256|[a-z_]+_at|previous_not_after|not_before|not_after)$/;
const TOKEN = /^[A-Za-z0-9._:/@+=-]{1,200}$/;

const digestOf = (text: string) => `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;

function keptValue(value: unknown): unknown {
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) && Math.abs(value) < 1e6 ? value : digestOf(String(value));
  if (typeof value === 'string') return TOKEN.test(value) && scanTextForPhi(value).length === 0 ? value : digestOf(value);
  if (Array.isArray(value)) return value.map(keptValue);
  return digestOf(stringify(value) ?? '');
}

/** An event's data as its ledger leaf records it (see KEPT_MEMBERS). Deterministic: anyone holding the event can recompute it. */
export function ledgerData(data: Record<string, unknown>): Record<string, unknown> {
  const leaf: Record<string, unknown> = {};
  for (const [member, value] of Object.entries(data)) {
    const name = TOKEN.test(member) ? member : digestOf(member);
    leaf[name] = KEPT_MEMBERS.test(member) ? keptValue(value) : digestOf(typeof value === 'string' ? value : (stringify(value) ?? 'null'));
  }
  return leaf;
}

/**
 * The leaf's bytes are the UTF-8 of this canonical JSON: object keys sorted by UTF-16 code units,
 * no insignificant whitespace, numbers and strings as `JSON.stringify` writes them — RFC 8785 (JCS)
 * for the values events carry (strings, integers, booleans, null, arrays, objects). The data is the
 * event's as {@link ledgerData} records it: identifiers kept, everything else as its digest.
 */
export function encodeLedgerEntry(content: LedgerEntryContent): string {
  const { seq, type, subject, occurred_at } = content;
  const data = ledgerData(content.data);
  const text = stringify({ seq, type, subject, occurred_at, data });
  if (typeof text !== 'string') throw new Error('a ledger entry must be JSON-serialisable');
  return text;
}

/**
 * `typ` of a signed tree head's JWS. The registry signs other statements with the same key (its
 * metadata, responses), so a verifier insists on this type: nothing else can pass for a tree head.
 */
export const STH_JWS_TYPE = 'ward-sth+jws';
