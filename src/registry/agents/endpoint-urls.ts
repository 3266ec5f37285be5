/**
 * What an endpoint's `url` and `health_url` may be (docs/api.md, "Endpoint URLs"; issue 48): the
 * registry hands `url` to every caller in signed routing advice, so it must be an address of the
 * endpoint's protocol and nothing a client could be made to open, run or read instead
 * (`javascript:`, `file:`, `data:`, `mailto:`…). Pure: the policy comes from the configuration.
 *
 * - `hl7v2-mllp` is MLLP over TCP: `mllp://host:port` or `tcp://host:port`;
 * - every other protocol is spoken over HTTP: `https://`, and `http://` outside production (in
 *   production, `http://` only to a private address where `REGISTRY_ALLOW_PRIVATE_ENDPOINTS` says
 *   the registry serves a closed network);
 * - `health_url` is read by the registry's prober over HTTP: the same as an HTTP endpoint's `url`;
 * - no user name or password in the URL (it would be published to everyone);
 * - in production, no loopback, private, link-local or unspecified address (an address literal in
 *   any spelling, or `localhost`), unless `REGISTRY_ALLOW_PRIVATE_ENDPOINTS`: the prober already
 *   refuses to reach them, and advice that sends callers to their own network is an SSRF aid. Names
 *   are not resolved here (the answer can change); the prober checks what a name resolves to.
 */
import { isPrivateLiteral } from '../../core/net/guarded-fetch.ts';

export type EndpointUrlPolicy = {
  /** `REGISTRY_ENV=production`: `http://` is refused, and so are private addresses unless allowed. */
  readonly production: boolean;
  /** `REGISTRY_ALLOW_PRIVATE_ENDPOINTS`: private and loopback addresses allowed in production. */
  readonly allowPrivate: boolean;
};

/** Schemes per protocol; a protocol not named here is spoken over HTTP. */
const SCHEMES_OF: Readonly<Record<string, readonly string[]>> = { 'hl7v2-mllp': ['mllp', 'tcp'] };
const HTTP_SCHEMES = ['https', 'http'] as const;

export type EndpointUrlProblem = { pointer: string; reason: string };

/**
 * The schemes an endpoint of `protocol` may use under `policy`, in the order a message names them;
 * `privateHost` says whether the URL's host is a private address (production's http:// rule).
 */
export function allowedSchemes(protocol: string, policy: EndpointUrlPolicy, privateHost = false): readonly string[] {
  const schemes = SCHEMES_OF[protocol] ?? HTTP_SCHEMES;
  const plainHttp = !policy.production || (policy.allowPrivate && privateHost);
  return plainHttp ? schemes : schemes.filter((scheme) => scheme !== 'http');
}

/** Every problem of the endpoints' URLs, each with its JSON pointer into the record (`/endpoints/0/url`). */
export function endpointUrlProblems(
  endpoints: ReadonlyArray<{ url: string; protocol: string; health_url?: string | undefined }>,
  policy: EndpointUrlPolicy,
): EndpointUrlProblem[] {
  return endpoints.flatMap((endpoint, index) => {
    const problems: EndpointUrlProblem[] = [];
    const url = urlProblem(endpoint.url, endpoint.protocol, policy, `protocol ${endpoint.protocol}`);
    if (url) problems.push({ pointer: `/endpoints/${index}/url`, reason: url });
    if (endpoint.health_url !== undefined) {
      const health = urlProblem(endpoint.health_url, '', policy, 'the health prober');
      if (health) problems.push({ pointer: `/endpoints/${index}/health_url`, reason: health });
    }
    return problems;
  });
}

function urlProblem(value: string, protocol: string, policy: EndpointUrlPolicy, what: string): string | undefined {
  const url = URL.parse(value);
  const privateHost = url !== null && isPrivateHost(hostOf(url) ?? '');
  const schemes = allowedSchemes(protocol, policy, privateHost);
  const expected = schemes.map((scheme) => `${scheme}://`).join(' or ');
  if (!url) return `is not a URL; expected ${expected}`;
  const scheme = url.protocol.slice(0, -1);
  if (!schemes.includes(scheme)) {
    const production = policy.production && scheme === 'http' && schemes.includes('https') ? ' (http:// is refused in production)' : '';
    return `takes ${expected} for ${what}, not ${scheme}:${production}`;
  }
  const host = hostOf(url);
  if (!host) return `names no host; expected ${expected}host`;
  if (url.username || url.password) return 'must not carry a user name or password: the URL is published to every caller';
  if (policy.production && !policy.allowPrivate && privateHost) {
    return `${host} is a loopback, private or link-local address, refused in production (REGISTRY_ALLOW_PRIVATE_ENDPOINTS)`;
  }
  return undefined;
}

/**
 * The host as an HTTP URL would read it: `mllp:` and `tcp:` URLs keep their host as written
 * (`mllp://0x7f.1`), so it is parsed again the way HTTP clients do (`127.0.0.1`).
 */
function hostOf(url: URL): string | undefined {
  if (url.hostname === '') return undefined;
  if (url.protocol === 'http:' || url.protocol === 'https:') return url.hostname;
  return URL.parse(`http://${url.host}/`)?.hostname ?? undefined;
}

function isPrivateHost(host: string): boolean {
  if (host === '') return false;
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost') || isPrivateLiteral(host);
}
