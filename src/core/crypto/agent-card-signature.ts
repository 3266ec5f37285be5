/**
 * A2A 1.0 agent card signatures (§8.4): a JWS whose payload is the canonical card
 * (agent-card-canonical.ts), carried detached in the card's `signatures[]` as `{protected,
 * signature}`. The protected header names `alg`, `typ: "JOSE"`, `kid` and, for Ward's cards, a `jku`
 * on the card's own origin (docs/mesh.md, "Signed cards"). Verification checks every signature
 * until one verifies with a key the caller's resolver trusts.
 */
import { FlattenedSign, base64url, decodeProtectedHeader, errors, flattenedVerify, type CryptoKey, type JWK, type KeyObject } from 'jose';
import { CardShapeError, canonicalAgentCardPayload } from './agent-card-canonical.ts';

/** Asymmetric algorithms only: a card is verified by anyone, with a published key. */
export const CARD_SIGNATURE_ALGORITHMS = ['ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519', 'RS256', 'PS256'] as const;

export type AgentCardSignature = { readonly protected: string; readonly signature: string; readonly header?: Record<string, unknown> };

export type CardSigningKey = {
  readonly privateKey: CryptoKey | KeyObject;
  readonly alg: string;
  readonly kid: string;
  /** Where the public key is published (a JWKS); omitted from the header when absent. */
  readonly jku?: string;
};

/** The signature of `card` (its `signatures` member ignored), as one `signatures[]` entry. */
export async function signAgentCard(card: Record<string, unknown>, key: CardSigningKey): Promise<AgentCardSignature> {
  const payload = new TextEncoder().encode(canonicalAgentCardPayload(card));
  const jws = await new FlattenedSign(payload)
    .setProtectedHeader({ alg: key.alg, typ: 'JOSE', kid: key.kid, ...(key.jku ? { jku: key.jku } : {}) })
    .sign(key.privateKey);
  return { protected: jws.protected as string, signature: jws.signature };
}

/**
 * Signatures a card may carry: any one that verifies suffices, and several only serve a key change,
 * so more than this is refused before any key is looked up (each may name a key set to fetch).
 */
export const CARD_MAX_SIGNATURES = 8;

/** The protected header parameters a key resolver decides on. */
export type CardSignatureHeader = { readonly alg: string; readonly kid: string; readonly jku?: string };

/** Why a card has no verified signature: none at all, none made with a trusted key, or none that verifies. */
export type CardSignatureFailure = 'unsigned' | 'untrusted' | 'invalid';

export class CardSignatureError extends Error {
  readonly failure: CardSignatureFailure;
  constructor(failure: CardSignatureFailure, message: string) {
    super(message);
    this.name = 'CardSignatureError';
    this.failure = failure;
  }
}

/**
 * The public key for a signature, or `undefined` when the resolver trusts no key under that
 * header (unknown `kid`, `jku` somewhere it does not accept, keys it could not fetch).
 */
export type CardKeyResolver = (header: CardSignatureHeader) => Promise<CryptoKey | KeyObject | JWK | undefined>;

const isText = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

function headerOf(entry: unknown): CardSignatureHeader | string {
  if (typeof entry !== 'object' || entry === null) return 'a signature is not an object';
  const { protected: protectedHeader, signature } = entry as { protected?: unknown; signature?: unknown };
  if (!isText(protectedHeader) || !isText(signature)) return 'a signature lacks protected or signature';
  let header: Record<string, unknown>;
  try {
    header = decodeProtectedHeader({ protected: protectedHeader }) as Record<string, unknown>;
  } catch {
    return 'a protected header is not base64url JSON';
  }
  if (!isText(header.alg) || !(CARD_SIGNATURE_ALGORITHMS as readonly string[]).includes(header.alg)) return 'a signature names no accepted alg';
  if (!isText(header.kid)) return 'a signature names no kid';
  if (header.b64 === false) return 'an unencoded (b64: false) payload is not accepted';
  return { alg: header.alg, kid: header.kid, ...(isText(header.jku) ? { jku: header.jku } : {}) };
}

/**
 * Verifies `card.signatures`: resolves with the header of the first signature that verifies over
 * the canonical card with a key `resolveKey` trusts; rejects with a {@link CardSignatureError}
 * otherwise: `unsigned` (none), `invalid` (a trusted key's signature does not verify, or an entry
 * is malformed: the card was changed after signing), `untrusted` (no signature's key is trusted).
 */
export async function verifyAgentCard(card: Record<string, unknown>, resolveKey: CardKeyResolver): Promise<CardSignatureHeader> {
  const entries = card.signatures;
  if (entries === undefined || (Array.isArray(entries) && entries.length === 0)) throw new CardSignatureError('unsigned', 'The card carries no signature.');
  if (!Array.isArray(entries)) throw new CardSignatureError('invalid', 'signatures is not an array.');
  if (entries.length > CARD_MAX_SIGNATURES) throw new CardSignatureError('invalid', `The card carries more than ${CARD_MAX_SIGNATURES} signatures.`);
  let canonical: string;
  try {
    canonical = canonicalAgentCardPayload(card);
  } catch (error) {
    if (error instanceof CardShapeError) throw new CardSignatureError('invalid', `The card ${error.message}.`);
    throw error;
  }
  const payload = base64url.encode(canonical);
  let invalid: string | undefined;
  let untrusted: string | undefined;
  for (const entry of entries) {
    const header = headerOf(entry);
    if (typeof header === 'string') {
      invalid ??= header;
      continue;
    }
    const key = await resolveKey(header);
    if (key === undefined) {
      untrusted ??= `no trusted key ${header.kid}${header.jku ? ` at ${header.jku}` : ''}`;
      continue;
    }
    const { protected: protectedHeader, signature, header: unprotected } = entry as AgentCardSignature;
    try {
      await flattenedVerify(
        { payload, protected: protectedHeader, signature, ...(unprotected ? { header: unprotected } : {}) },
        key,
        { algorithms: [header.alg] },
      );
      return header;
    } catch (error) {
      invalid ??= error instanceof errors.JWSSignatureVerificationFailed ? `the signature by ${header.kid} does not match the card` : `the signature by ${header.kid} is malformed`;
    }
  }
  if (invalid !== undefined) throw new CardSignatureError('invalid', `No signature verifies: ${invalid}.`);
  throw new CardSignatureError('untrusted', `No signature is made with a trusted key: ${untrusted ?? 'none'}.`);
}
