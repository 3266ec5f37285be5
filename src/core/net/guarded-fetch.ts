/**
 * A `fetch` for URLs someone else chose (a child registry's `jwks_uri`, a parent's or child's API
 * base): with `allowPrivate: false` it never connects to loopback, private, link-local, CGNAT or
 * unspecified addresses, in any spelling (IPv4-mapped IPv6, numeric hosts, names that resolve there).
 * The check is made inside the connection's own DNS lookup, so a name that resolves to a public
 * address for one look-up and a private one for the next (DNS rebinding) cannot slip through.
 * Redirects are not followed (a 3xx is returned as it is). Node's global fetch offers no lookup hook,
 * hence node:http under a fetch-shaped function.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { Readable } from 'node:stream';
import { isPrivateAddress } from './private-addresses.ts';

export class PrivateAddressError extends Error {
  readonly code = 'EPRIVATE';
  constructor(host: string) {
    super(`${host} is a private, loopback or link-local address, refused here`);
    this.name = 'PrivateAddressError';
  }
}

/**
 * Whether `hostname` (as in a URL, brackets allowed) is an address literal in a refused range. Node
 * normalises numeric spellings in `new URL` (`http://2130706433/`, `http://0x7f.1/` → 127.0.0.1), so
 * a literal check after parsing sees them all.
 */
export function isPrivateLiteral(hostname: string): boolean {
  const literal = hostname.replace(/^\[|\]$/g, '');
  return isIP(literal) !== 0 && isPrivateAddress(literal);
}

/** An answer whose status line `fetch`'s Response cannot hold (Node's parser takes any 3 digits, e.g. 600). */
export class InvalidStatusError extends Error {
  readonly code = 'EINVALIDSTATUS';
  readonly status: number;
  constructor(host: string, status: number) {
    super(`${host} answered with status ${status}, which is not an HTTP status a response can have`);
    this.name = 'InvalidStatusError';
    this.status = status;
  }
}

export type GuardedFetchOptions = {
  /** true: no address is refused (development, or REGISTRY_ALLOW_PRIVATE_ENDPOINTS). */
  readonly allowPrivate: boolean;
};

/** A fetch-compatible function for GET/POST with small bodies, refusing private targets unless allowed. */
export function createGuardedFetch(options: GuardedFetchOptions): typeof fetch {
  if (options.allowPrivate) return fetch;
  return createCheckedFetch(isPrivateAddress);
}

/**
 * The node:http fetch behind the guard: refuses every address `refuses` names, checked on the literal
 * and inside the connection's own DNS lookup. Exported for tests, which pass a predicate that refuses
 * nothing to reach the production code path on loopback.
 */
export function createCheckedFetch(refuses: (address: string) => boolean): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const target = new URL(input instanceof Request ? input.url : String(input));
    if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new TypeError(`unsupported protocol ${target.protocol}`);
    const literal = target.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal) !== 0 && refuses(literal)) throw new PrivateAddressError(target.hostname);
    const lookup = (hostname: string, lookupOptions: object, callback: (...args: unknown[]) => void) => {
      dnsLookup(hostname, { ...lookupOptions, all: true }, (error, addresses: LookupAddress[]) => {
        if (error) return callback(error);
        if (addresses.some((address) => refuses(address.address))) return callback(new PrivateAddressError(hostname));
        const wantsAll = (lookupOptions as { all?: boolean }).all === true;
        return wantsAll ? callback(null, addresses) : callback(null, addresses[0]?.address, addresses[0]?.family);
      });
    };
    const headers = new Headers(init?.headers);
    const body = init?.body === undefined || init.body === null ? undefined : Buffer.from(String(init.body));
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<Response>((resolve, reject) => {
      const request = send(target, {
        method: init?.method ?? 'GET',
        headers: Object.fromEntries(headers),
        lookup: lookup as never,
        ...(init?.signal ? { signal: init.signal } : {}),
      });
      request.on('error', reject);
      request.on('response', (response: IncomingMessage) => {
        // Nothing may throw out of this listener: an EventEmitter listener's throw ends the process.
        try {
          resolve(asResponse(response, target));
        } catch (error) {
          response.destroy();
          reject(error as Error);
        }
      });
      request.end(body);
    });
  }) as typeof fetch;
}

/** A node:http answer as a fetch Response; throws InvalidStatusError for a status outside 200-599. */
function asResponse(response: IncomingMessage, target: URL): Response {
  const status = response.statusCode ?? 502;
  if (status < 200 || status > 599) throw new InvalidStatusError(target.host, status);
  const answerHeaders = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    if (value !== undefined) answerHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const stream = status === 204 || status === 304 ? null : (Readable.toWeb(response) as ReadableStream<Uint8Array>);
  return new Response(stream, { status, headers: answerHeaders });
}
