import { createHash, randomBytes } from 'node:crypto';
import canonicalize from 'canonicalize';
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

/**
 * Event types whose leaves are **sealed**: they commit to the event by a salted digest and publish
 * nothing else of it (docs/transparency.md, "What each leaf discloses"). Events about an
 * organisation's API keys are the organisation's and the administrators' business (the key list is
 * admin-only, the change stream gives them to no one else), while the ledger is public to every
 * reader, for ever. Every `api_key.*` type is sealed, so a new one cannot be published by mistake.
 */
export function isSealedEventType(type: string): boolean {
  return type.startsWith('api_key.');
}

/** The member of a sealed event's data that salts its digest: 128 random bits, base64url. */
export const LEDGER_SALT_MEMBER = 'ledger_salt';

/**
 * A sealed event's data with its salt (see {@link isSealedEventType}). The salt travels with the event
 * to those allowed to see it, who can then recompute the leaf; without it, a guess of the event (a
 * key id someone knows, an organisation) cannot be checked against the ledger.
 */
export function withLedgerSalt(data: Record<string, unknown>): Record<string, unknown> {
  return { ...data, [LEDGER_SALT_MEMBER]: randomBytes(16).toString('base64url') };
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
  /^(?:agent_id|level|from|to|registry_id|parent_id|org_id|key_id|previous_key_id|session_id|kids?|alg|version|status|state|tier|jurisdiction|source|turns?|max_turns|headless|model|scopes|action|blocked_kind|count|seq|[a-z_]+_sha256|[a-z_]+_at|previous_not_after|not_before|not_after)$/;
const TOKEN = /^[A-Za-z0-9._:/@+=-]{1,200}$/;

const digestOf = (text: string) => `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;

function keptValue(value: unknown): unknown {
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) && Math.abs(value) < 1e6 ? value : digestOf(String(value));
  if (typeof value === 'string') return TOKEN.test(value) && scanTextForPhi(value).length === 0 ? value : digestOf(value);
  if (Array.isArray(value)) return value.map(keptValue);
  return digestOf(canonicalize(value) ?? '');
}

/** An event's data as its ledger leaf records it (see KEPT_MEMBERS). Deterministic: anyone holding the event can recompute it. */
export function ledgerData(data: Record<string, unknown>): Record<string, unknown> {
  const leaf: Record<string, unknown> = {};
  for (const [member, value] of Object.entries(data)) {
    const name = TOKEN.test(member) ? member : digestOf(member);
    leaf[name] = KEPT_MEMBERS.test(member) ? keptValue(value) : digestOf(typeof value === 'string' ? value : (canonicalize(value) ?? 'null'));
  }
  return leaf;
}

/**
 * The leaf's bytes are the UTF-8 of its RFC 8785 (JCS) form, written by `canonicalize`: object keys
 * sorted by UTF-16 code units, no insignificant whitespace, numbers and strings as `JSON.stringify`
 * writes them. The data is the event's as {@link ledgerData} records it: identifiers kept, everything
 * else as its digest.
 */
export function encodeLedgerEntry(content: LedgerEntryContent): string {
  const { seq, type, occurred_at } = content;
  const sealed = isSealedEventType(type);
  const subject = sealed ? SEALED_SUBJECT : content.subject;
  const data = sealed ? { event_sha256: sealedDigest(content) } : ledgerData(content.data);
  const text = canonicalize({ seq, type, subject, occurred_at, data });
  if (typeof text !== 'string') throw new Error('a ledger entry must be JSON-serialisable');
  return text;
}

/** The subject a sealed leaf names: not the key, nor its organisation. */
export const SEALED_SUBJECT = 'sealed';

/**
 * The digest a sealed leaf commits to: SHA-256 of the whole event (seq, type, subject, occurred_at
 * and its data, salt included) as canonical JSON, lower-case hex. An event without its salt is a
 * programmer's mistake (its digest could be confirmed by guessing), refused at once.
 */
function sealedDigest(content: LedgerEntryContent): string {
  const salt = content.data[LEDGER_SALT_MEMBER];
  if (typeof salt !== 'string' || salt.length < 22) throw new Error(`a ${content.type} event must carry its ${LEDGER_SALT_MEMBER} (withLedgerSalt)`);
  const { seq, type, subject, occurred_at, data } = content;
  return createHash('sha256').update(canonicalize({ seq, type, subject, occurred_at, data }) ?? '', 'utf8').digest('hex');
}

/**
 * `typ` of a signed tree head's JWS. The registry signs other statements with the same key (its
 * metadata, responses), so a verifier insists on this type: nothing else can pass for a tree head.
 */
export const STH_JWS_TYPE = 'ward-sth+jws';
