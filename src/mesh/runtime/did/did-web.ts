/**
 * did:web resolution (https://w3c-ccg.github.io/did-method-web/): `did:web:example.com` is the document
 * at `https://example.com/.well-known/did.json`, `did:web:example.com:agents:triage` the one at
 * `https://example.com/agents/triage/did.json`; a port is written `%3A`. In development a local
 * directory laid out the same way (`<dir>/example.com/agents/triage/did.json`) stands in for the web.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { LRUCache } from 'lru-cache';
import { createGuardedFetch } from '../../../core/net/guarded-fetch.ts';

/** The parts of a DID document this project reads (W3C DID Core §5). */
export type DidDocument = {
  readonly id: string;
  readonly verificationMethod?: readonly VerificationMethod[];
  readonly authentication?: readonly (string | VerificationMethod)[];
  readonly assertionMethod?: readonly (string | VerificationMethod)[];
};

export type VerificationMethod = {
  readonly id: string;
  readonly type?: string;
  readonly controller?: string;
  readonly publicKeyJwk?: Record<string, unknown>;
};

export type DidResolver = (did: string) => Promise<DidDocument>;

const SEGMENT = /^[A-Za-z0-9._~%-]+$/;

/** The path segments of a did:web identifier (host first), or an error for anything else. */
export function didWebSegments(did: string): string[] {
  const match = /^did:web:(.+)$/.exec(did);
  if (!match?.[1]) throw new Error(`not a did:web identifier: ${did}`);
  const segments = match[1].split(':');
  for (const segment of segments) {
    // Refuses empty, `.` and `..` segments so a DID can never walk out of the local directory.
    if (!SEGMENT.test(segment) || segment === '.' || segment === '..') throw new Error(`bad did:web segment in ${did}`);
  }
  return segments;
}

/** The HTTPS URL of a did:web document. */
export function didWebUrl(did: string): string {
  const [host, ...path] = didWebSegments(did);
  const origin = `https://${decodeURIComponent(host as string)}`;
  return path.length === 0 ? `${origin}/.well-known/did.json` : `${origin}/${path.map(decodeURIComponent).join('/')}/did.json`;
}

/** Where a did:web document lives under a local development directory. */
export function didWebFile(directory: string, did: string): string {
  const [host, ...path] = didWebSegments(did);
  const root = resolve(directory);
  const file = path.length === 0 ? join(root, host as string, '.well-known', 'did.json') : join(root, host as string, ...path, 'did.json');
  if (!file.startsWith(root + sep)) throw new Error(`did:web path escapes the directory: ${did}`);
  return file;
}

function checkDocument(did: string, value: unknown): DidDocument {
  if (typeof value !== 'object' || value === null || (value as { id?: unknown }).id !== did) {
    throw new Error(`the DID document does not describe ${did}`);
  }
  return value as DidDocument;
}

const MAX_DOCUMENT_BYTES = 64 * 1024;

export type DidWebResolverOptions = {
  /** A local directory laid out as the web is (development, `DID_WEB_DIR`); default: HTTPS. */
  readonly directory?: string;
  /** How long a document is kept (default 5 minutes, so a rotated key is taken up); 0 keeps none. */
  readonly cacheMs?: number;
  /** How many documents are kept at most, the least recently used going first (default 1000). */
  readonly cacheEntries?: number;
  /** The HTTPS fetch's limit (default 3 s). */
  readonly timeoutMs?: number;
  /** Fetch from loopback, private and link-local addresses too (default false). */
  readonly allowPrivate?: boolean;
};

/**
 * A did:web resolver: from `directory` when given (development, `DID_WEB_DIR`), otherwise over HTTPS
 * with a timeout and a size limit. Documents are cached for `cacheMs`, at most `cacheEntries` of them
 * (callers name the DIDs, so the cache must not grow with them). The caller names the DID, so its
 * host is someone else's choice: the fetch refuses loopback, private and link-local addresses in
 * every spelling (core/net/guarded-fetch.ts), as the registry's fetches do in production; local
 * development serves documents from `DID_WEB_DIR` instead.
 */
export function createDidWebResolver(options: DidWebResolverOptions = {}): DidResolver {
  const cacheMs = options.cacheMs ?? 5 * 60 * 1000;
  const cache = cacheMs > 0 ? new LRUCache<string, DidDocument>({ max: options.cacheEntries ?? 1000, ttl: cacheMs }) : undefined;
  const fetchDocument = createGuardedFetch({ allowPrivate: options.allowPrivate ?? false });
  const load = async (did: string): Promise<unknown> => {
    if (options.directory !== undefined) return JSON.parse(await readFile(didWebFile(options.directory, did), 'utf8'));
    const response = await fetchDocument(didWebUrl(did), {
      signal: AbortSignal.timeout(options.timeoutMs ?? 3000),
      headers: { accept: 'application/did+json, application/json' },
    });
    if (!response.ok) throw new Error(`DID document fetch failed with ${response.status}`);
    const text = await response.text();
    if (Buffer.byteLength(text) > MAX_DOCUMENT_BYTES) throw new Error('DID document too large');
    return JSON.parse(text);
  };
  return async (did) => {
    const cached = cache?.get(did);
    if (cached) return cached;
    const document = checkDocument(did, await load(did));
    cache?.set(did, document);
    return document;
  };
}
