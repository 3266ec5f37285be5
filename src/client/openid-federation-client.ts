/**
 * OpenID Federation 1.0 calls (docs/federation.md, "OpenID Federation"): an entity's configuration at
 * `{entity id}/.well-known/openid-federation` (OIDF §9) and a subordinate statement from a superior's
 * fetch endpoint (OIDF §8.1). With the federation policy of ./federation-client.ts: no redirect is
 * followed, the answer is read up to a cap, no credential is sent, and the registry passes its guarded
 * fetch so production never reaches a private address. The statements are returned unverified: the
 * caller checks them against keys it already trusts.
 */
import { ENTITY_CONFIGURATION_PATH, ENTITY_STATEMENT_MEDIA_TYPE, entityIdentifier, oidfEndpointPath } from '../contract/openid-federation.ts';
import { TRUST_MARK_MEDIA_TYPE, TRUST_MARK_STATUS_MEDIA_TYPE } from '../contract/oidf-trust-marks.ts';
import { BodyTooLargeError, readBodyCapped } from '../core/http/read-capped.ts';
import { describe } from './registry-transport.ts';

/** An entity statement is a few keys and some metadata: 64 KiB is ample. */
export const ENTITY_STATEMENT_MAX_BYTES = 64 * 1024;

export type OidfFetchOptions = {
  /** Default the global `fetch`; registries pass their guarded fetch. */
  fetch?: typeof fetch | undefined;
  timeoutMs: number;
  maxBytes?: number;
};

/** A compact JWS as served, or why none could be had. */
export type EntityStatementAnswer = { ok: true; jwt: string } | { ok: false; status: number | null; message: string; error?: string };

/** GET `{entityId}/.well-known/openid-federation`: the entity's self-signed configuration. */
export function fetchEntityConfiguration(entityId: string, options: OidfFetchOptions): Promise<EntityStatementAnswer> {
  return getEntityStatement(`${entityId.replace(/\/+$/, '')}${ENTITY_CONFIGURATION_PATH}`, options);
}

/**
 * GET `{fetchEndpoint}?sub=<subject>`: the superior's subordinate statement about `subject`. The
 * endpoint is the `federation_fetch_endpoint` of the superior's configuration, and may carry a query.
 */
export function fetchSubordinateStatement(fetchEndpoint: string, subject: string, options: OidfFetchOptions): Promise<EntityStatementAnswer> {
  let url: URL;
  try {
    url = new URL(fetchEndpoint);
  } catch {
    return Promise.resolve({ ok: false, status: null, message: `the fetch endpoint ${fetchEndpoint} is not a URL` });
  }
  url.searchParams.set('sub', subject);
  return getEntityStatement(url.href, options);
}

/**
 * GET `{issuer}/v1/oidf/trust-mark?trust_mark_type&sub` (OIDF §8.6, the issuer's
 * `federation_trust_mark_endpoint` on a Ward registry): a trust mark the issuer signs about `subject`.
 */
export function fetchTrustMark(issuerEntityId: string, trustMarkType: string, subject: string, options: OidfFetchOptions): Promise<EntityStatementAnswer> {
  const url = new URL(`${entityIdentifier(issuerEntityId)}${oidfEndpointPath('federation_trust_mark_endpoint')}`);
  url.searchParams.set('trust_mark_type', trustMarkType);
  url.searchParams.set('sub', subject);
  return getEntityStatement(url.href, options, TRUST_MARK_MEDIA_TYPE);
}

/**
 * POST `trust_mark=<mark>` to an issuer's `federation_trust_mark_status_endpoint` (OIDF §8.4): its
 * signed status response, unverified (the caller checks it with the issuer's keys from the chain).
 */
export async function postTrustMarkStatus(statusEndpoint: string, trustMark: string, options: OidfFetchOptions): Promise<EntityStatementAnswer> {
  const fetchImpl = options.fetch ?? fetch;
  let status: number | null = null;
  try {
    const response = await fetchImpl(statusEndpoint, {
      method: 'POST',
      headers: { accept: TRUST_MARK_STATUS_MEDIA_TYPE, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ trust_mark: trustMark }).toString(),
      redirect: 'error',
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    status = response.status;
    const text = await readBodyCapped(response, options.maxBytes ?? ENTITY_STATEMENT_MAX_BYTES);
    const mediaType = (response.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
    if (status !== 200) return { ok: false, status, message: `${statusEndpoint} answered HTTP ${status}${oidfError(text)}` };
    if (mediaType !== TRUST_MARK_STATUS_MEDIA_TYPE) return { ok: false, status, message: `${statusEndpoint} answered ${mediaType || 'no content type'}` };
    return { ok: true, jwt: text.trim() };
  } catch (error) {
    if (error instanceof BodyTooLargeError) return { ok: false, status, message: `${statusEndpoint} answered more than ${error.maxBytes} bytes` };
    return { ok: false, status, message: `${statusEndpoint} could not be reached (${describe(error)})` };
  }
}

async function getEntityStatement(url: string, options: OidfFetchOptions, expected: string = ENTITY_STATEMENT_MEDIA_TYPE): Promise<EntityStatementAnswer> {
  const fetchImpl = options.fetch ?? fetch;
  let status: number | null = null;
  try {
    const response = await fetchImpl(url, { method: 'GET', headers: { accept: expected }, redirect: 'error', signal: AbortSignal.timeout(options.timeoutMs) });
    status = response.status;
    const text = await readBodyCapped(response, options.maxBytes ?? ENTITY_STATEMENT_MAX_BYTES);
    const mediaType = (response.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
    if (status !== 200) return { ok: false, status, message: `${url} answered HTTP ${status}${oidfError(text)}`, ...oidfErrorCode(text) };
    if (mediaType !== expected) return { ok: false, status, message: `${url} answered ${mediaType || 'no content type'}, not ${expected}` };
    return { ok: true, jwt: text.trim() };
  } catch (error) {
    if (error instanceof BodyTooLargeError) return { ok: false, status, message: `${url} answered more than ${error.maxBytes} bytes` };
    return { ok: false, status, message: `${url} could not be reached (${describe(error)})` };
  }
}

/** `{error}`: the OIDF error code of a refusal (§8.9), when the body is one (unsigned: a hint, never proof). */
function oidfErrorCode(text: string): { error?: string } {
  try {
    const body = JSON.parse(text) as { error?: unknown };
    return typeof body.error === 'string' ? { error: body.error } : {};
  } catch {
    return {};
  }
}

/** `: <error>: <description>` of an OIDF error body, or '' when the body is not one. */
function oidfError(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: unknown; error_description?: unknown };
    return typeof body.error === 'string' ? `: ${body.error}${typeof body.error_description === 'string' ? `: ${body.error_description}` : ''}` : '';
  } catch {
    return '';
  }
}
