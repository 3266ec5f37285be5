/**
 * Reads an A2A agent card for registration (docs/mesh.md, "Signed cards"): through the registry's
 * guarded fetch (no private address in production unless REGISTRY_ALLOW_PRIVATE_ENDPOINTS), redirects
 * followed only within the card's origin, a size and a time limit; the card's interface URLs must be
 * on its origin (a card proves control of that origin only); its signature is verified with the key
 * its `jku` names, which must be on the card's origin too, under REGISTRY_CARD_SIGNATURES. Every
 * refusal is a WardError with a CARD_* code of its own.
 */
import { importJWK, type JWK } from 'jose';
import { CardShapeError, assertCardShape } from '../../../core/crypto/agent-card-canonical.ts';
import { CARD_MAX_SIGNATURES, CardSignatureError, verifyAgentCard, type CardSignatureHeader } from '../../../core/crypto/agent-card-signature.ts';
import { WardError } from '../../../core/errors.ts';
import { InvalidStatusError } from '../../../core/net/guarded-fetch.ts';

export type CardSignaturePolicy = 'off' | 'if-present' | 'required';

export type CardReaderOptions = {
  /** The registry's guarded fetch (core/net/guarded-fetch.ts): private targets refused unless allowed. */
  readonly fetch: typeof fetch;
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly signatures: CardSignaturePolicy;
};

/** A card as read: the document, the URL it was read at, and the signature that verified (if any). */
export type CardReading = {
  readonly cardUrl: string;
  readonly card: Record<string, unknown>;
  readonly signedBy: CardSignatureHeader | null;
};

const MAX_REDIRECTS = 3;

const isPrivateAddressError = (error: unknown): boolean =>
  (error as { code?: unknown } | null)?.code === 'EPRIVATE' || (error as { cause?: { code?: unknown } } | null)?.cause?.code === 'EPRIVATE';

/** Why a request or its body failed, as CARD_UNREACHABLE says: a timeout, a reset, a status no HTTP answer has. */
function unreachableReason(error: unknown, signal: AbortSignal): string {
  if (error instanceof InvalidStatusError) return `http_${error.status}`;
  // The deadline's abort surfaces as a TimeoutError from Node's fetch, an AbortError from node:http.
  if (signal.aborted) return (signal.reason as Error | undefined)?.name === 'TimeoutError' ? 'timeout' : 'aborted';
  if ((error as Error | null)?.name === 'TimeoutError') return 'timeout';
  const code = (error as { code?: unknown } | null)?.code ?? (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'ERR_STREAM_PREMATURE_CLOSE') return 'reset';
  return 'unreachable';
}

/** The rest of an answer not read, let go (a stream already broken has nothing to cancel). */
async function discard(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => undefined);
}

/**
 * The reader's options for one read, with its one signal: the read's deadline (`timeoutMs` for the
 * whole read: the card, its redirects and its key sets), the registry stopping, the caller gone.
 */
type ReadOptions = CardReaderOptions & { readonly signal: AbortSignal };

/** Key sets one read fetches at most: several signatures serve a key change, which needs two key sets at most. */
export const CARD_MAX_KEY_SETS = 2;

/** The body of a 200 answer at `url` (same-origin redirects followed), at most `maxBytes`. */
async function fetchLimited(url: URL, options: ReadOptions): Promise<string> {
  let target = url;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop += 1) {
    // The read's one deadline covers each request and its body: a host that stalls after its headers is cut off too.
    const signal = options.signal;
    const unreachable = (error: unknown) => new WardError('CARD_UNREACHABLE', undefined, { card_url: target.toString(), reason: unreachableReason(error, signal) });
    let response: Response;
    try {
      response = await options.fetch(target, { redirect: 'manual', headers: { accept: 'application/json' }, signal });
    } catch (error) {
      if (isPrivateAddressError(error)) throw new WardError('CARD_PRIVATE_ADDRESS', undefined, { card_url: target.toString() });
      throw unreachable(error);
    }
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      await discard(response);
      const next = new URL(location, target);
      if (next.origin !== url.origin) throw new WardError('CARD_REDIRECT_OFF_ORIGIN', undefined, { card_url: url.toString(), location: next.toString() });
      target = next;
      continue;
    }
    if (response.status !== 200) {
      await discard(response);
      throw new WardError('CARD_UNREACHABLE', undefined, { card_url: target.toString(), reason: `http_${response.status}` });
    }
    try {
      return await readCapped(response, options.maxBytes);
    } catch (error) {
      // A body that stalls past the deadline or is cut mid-way is an unreachable card, not a fault of ours.
      if (error instanceof WardError) throw error;
      throw unreachable(error);
    }
  }
  throw new WardError('CARD_UNREACHABLE', undefined, { card_url: url.toString(), reason: 'too_many_redirects' });
}

/** The body as text, refused as soon as it passes `maxBytes` (whatever Content-Length claims). */
async function readCapped(response: Response, maxBytes: number): Promise<string> {
  const tooLarge = () => new WardError('CARD_TOO_LARGE', undefined, { max_bytes: maxBytes });
  if (Number(response.headers.get('content-length') ?? 0) > maxBytes) {
    await discard(response);
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += chunk.byteLength;
    if (size > maxBytes) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function invalid(pointer: string, reason: string): WardError {
  return new WardError('CARD_INVALID', `The document is not an A2A agent card: ${pointer} ${reason}.`, { errors: [{ in: 'card', pointer, reason }] });
}

/** The URLs a client of the card would call: 1.0's interfaces and 0.3's `url` and `additionalInterfaces`. */
function interfaceUrls(card: Record<string, unknown>): Array<{ pointer: string; url: unknown }> {
  const listed = (name: string) =>
    Array.isArray(card[name]) ? (card[name] as unknown[]).map((entry, index) => ({ pointer: `/${name}/${index}/url`, url: (entry as { url?: unknown } | null)?.url })) : [];
  return [...listed('supportedInterfaces'), ...listed('additionalInterfaces'), ...(card.url === undefined ? [] : [{ pointer: '/url', url: card.url }])];
}

/** The card's shape as far as the registry relies on it, and its interfaces on its own origin. */
function checkCard(document: unknown, origin: string): Record<string, unknown> {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) throw invalid('/', 'is not a JSON object');
  // Depth and size first, without recursion: every check after this one may walk the card.
  try {
    assertCardShape(document);
  } catch (error) {
    if (error instanceof CardShapeError) throw invalid(error.pointer || '/', error.message);
    throw error;
  }
  const card = document as Record<string, unknown>;
  if (Array.isArray(card.signatures) && card.signatures.length > CARD_MAX_SIGNATURES) throw invalid('/signatures', `must hold at most ${CARD_MAX_SIGNATURES} signatures`);
  if (typeof card.name !== 'string' || card.name.trim() === '') throw invalid('/name', 'must be a non-empty string');
  if (!Array.isArray(card.supportedInterfaces) || card.supportedInterfaces.length === 0) throw invalid('/supportedInterfaces', 'must list at least one interface');
  if (card.skills !== undefined && !Array.isArray(card.skills)) throw invalid('/skills', 'must be an array');
  for (const { pointer, url } of interfaceUrls(card)) {
    let parsed: URL;
    try {
      parsed = new URL(String(url));
    } catch {
      throw invalid(pointer, 'must be an absolute URL');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw invalid(pointer, 'must be an http(s) URL');
    if (parsed.origin !== origin) throw new WardError('CARD_ENDPOINT_OFF_ORIGIN', undefined, { url: parsed.toString(), card_origin: origin });
  }
  return card;
}

/** The keys a JWKS document lists; none when it is not JSON, not an object, or lists no objects. */
function publishedKeys(text: string): JWK[] {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return [];
  }
  const keys = typeof document === 'object' && document !== null ? (document as { keys?: unknown }).keys : undefined;
  return Array.isArray(keys) ? keys.filter((key): key is JWK => typeof key === 'object' && key !== null && !Array.isArray(key)) : [];
}

/**
 * The key resolver for a card at `origin`: the `jku` must be on that origin, the JWKS there must list
 * the `kid`. Anything else (no jku, another origin, a JWKS that cannot be read) trusts no key.
 */
function keysOnOrigin(origin: string, options: ReadOptions) {
  // Shared by every signature of the read: a key set is fetched once, and at most CARD_MAX_KEY_SETS of them.
  const sets = new Map<string, Promise<JWK[]>>();
  const keySet = (jku: URL): Promise<JWK[]> => {
    let set = sets.get(jku.href);
    if (!set) {
      if (sets.size >= CARD_MAX_KEY_SETS) return Promise.resolve([]);
      set = fetchLimited(jku, options).then(publishedKeys, () => []);
      sets.set(jku.href, set);
    }
    return set;
  };
  return async (header: CardSignatureHeader) => {
    if (header.jku === undefined || !URL.canParse(header.jku) || options.signal.aborted) return undefined;
    const jku = new URL(header.jku);
    if (jku.origin !== origin) return undefined;
    const jwk = (await keySet(jku)).find((key) => key.kid === header.kid);
    // A published key is a public one: a symmetric (`oct`) or private JWK is trusted for nothing.
    if (!jwk || jwk.kty === 'oct' || jwk.d !== undefined) return undefined;
    try {
      const key = await importJWK(jwk, header.alg);
      return key instanceof Uint8Array ? undefined : key;
    } catch {
      return undefined;
    }
  };
}

async function checkSignature(card: Record<string, unknown>, origin: string, options: ReadOptions): Promise<CardSignatureHeader | null> {
  if (options.signatures === 'off') return null;
  const signed = Array.isArray(card.signatures) ? card.signatures.length > 0 : card.signatures !== undefined;
  if (!signed) {
    if (options.signatures === 'required') throw new WardError('CARD_UNSIGNED');
    return null;
  }
  try {
    return await verifyAgentCard(card, keysOnOrigin(origin, options));
  } catch (error) {
    if (!(error instanceof CardSignatureError)) throw error;
    // A key set cut off by the read's deadline (or by the caller leaving) says nothing of the signature.
    if (options.signal.aborted) throw new WardError('CARD_UNREACHABLE', undefined, { card_url: origin, reason: unreachableReason(undefined, options.signal) });
    throw new WardError(error.failure === 'untrusted' ? 'CARD_SIGNATURE_UNTRUSTED' : 'CARD_SIGNATURE_INVALID', undefined, { reason: error.message });
  }
}

/** A card reader with these limits and this signature policy. */
export function createCardReader(options: CardReaderOptions) {
  /**
   * `stop` (the registry stopping, the caller gone): aborts the read (and its key-set reads) at once,
   * as CARD_UNREACHABLE reason `aborted`. The whole read, redirects and key sets included, ends by
   * `timeoutMs` (reason `timeout`).
   */
  return async function readCard(cardUrl: string, stop?: AbortSignal): Promise<CardReading> {
    const url = new URL(cardUrl);
    const deadline = AbortSignal.timeout(options.timeoutMs);
    const readOptions: ReadOptions = { ...options, signal: stop ? AbortSignal.any([deadline, stop]) : deadline };
    const text = await fetchLimited(url, readOptions);
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch {
      throw invalid('/', 'is not JSON');
    }
    const card = checkCard(document, url.origin);
    const signedBy = await checkSignature(card, url.origin, readOptions);
    return { cardUrl: url.toString(), card, signedBy };
  };
}

export type CardReader = ReturnType<typeof createCardReader>;
