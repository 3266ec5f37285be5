import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { isPrivateAddress } from '../../../core/net/private-addresses.ts';

export const PROBE_FAILURES = ['unreachable', 'timeout', 'http_error', 'not_protocol', 'auth_required', 'private_address'] as const;
export type ProbeFailure = (typeof PROBE_FAILURES)[number];

export type ProbeResult = { status: 'healthy' | 'unhealthy'; reason: ProbeFailure | null; latency_ms: number };

export type ProbeOptions = { timeoutMs: number; allowPrivate: boolean };

const MAX_BODY = 64 * 1024;

/**
 * Probes one endpoint: its `health_url` must answer 2xx, and a `mesh-a2a-jsonrpc` endpoint must also
 * serve its capability card (`<endpoint url>/.well-known/agent-card.json`), proving it speaks the
 * protocol rather than being any web server. Latency is that of the health check.
 */
export async function probeEndpoint(
  endpoint: { url: string; protocol: string; health_url: string },
  options: ProbeOptions,
): Promise<ProbeResult> {
  const started = performance.now();
  const health = await fetchJson(endpoint.health_url, options, false);
  const latency_ms = Math.round(performance.now() - started);
  if (health.failure) return { status: 'unhealthy', reason: health.failure, latency_ms };
  if (endpoint.protocol === 'mesh-a2a-jsonrpc') {
    const card = await fetchJson(`${endpoint.url.replace(/\/+$/, '')}/.well-known/agent-card.json`, options, true);
    if (card.failure) return { status: 'unhealthy', reason: card.failure === 'http_error' ? 'not_protocol' : card.failure, latency_ms };
    if (!isCapabilityCard(card.body)) return { status: 'unhealthy', reason: 'not_protocol', latency_ms };
  }
  return { status: 'healthy', reason: null, latency_ms };
}

function isCapabilityCard(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false;
  const card = body as Record<string, unknown>;
  return card.protocol === 'mesh-a2a-jsonrpc' || Array.isArray(card.methods) || typeof card.protocolVersion === 'string';
}

/**
 * One GET with a hard timeout. Private targets are refused inside the connection's own DNS lookup, so
 * a name that resolves to a public address for a check and a private one for the connection (DNS
 * rebinding) cannot slip through.
 */
function fetchJson(url: string, options: ProbeOptions, wantBody: boolean): Promise<{ failure?: ProbeFailure; body?: unknown }> {
  return new Promise((resolve) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      resolve({ failure: 'unreachable' });
      return;
    }
    // Node connects to an IP literal without calling `lookup`, so literals are checked here.
    const literal = target.hostname.replace(/^\[|\]$/g, '');
    if (!options.allowPrivate && isIP(literal) !== 0 && isPrivateAddress(literal)) {
      resolve({ failure: 'private_address' });
      return;
    }
    let refusedPrivate = false;
    const lookup = (hostname: string, lookupOptions: object, callback: (...args: unknown[]) => void) => {
      dnsLookup(hostname, { ...lookupOptions, all: true }, (error, addresses: LookupAddress[]) => {
        if (error) return callback(error);
        const allowed = options.allowPrivate ? addresses : addresses.filter((a) => !isPrivateAddress(a.address));
        if (allowed.length === 0) {
          refusedPrivate = true;
          return callback(Object.assign(new Error('private address refused'), { code: 'EPRIVATE' }));
        }
        const wantsAll = (lookupOptions as { all?: boolean }).all === true;
        return wantsAll ? callback(null, allowed) : callback(null, allowed[0]?.address, allowed[0]?.family);
      });
    };
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(target, { method: 'GET', lookup: lookup as never, headers: { accept: 'application/json' }, timeout: options.timeoutMs });
    const timer = setTimeout(() => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })), options.timeoutMs);
    const finish = (result: { failure?: ProbeFailure; body?: unknown }) => {
      clearTimeout(timer);
      resolve(result);
    };
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (refusedPrivate) finish({ failure: 'private_address' });
      else finish({ failure: error.code === 'ETIMEDOUT' ? 'timeout' : 'unreachable' });
    });
    req.on('response', (response: IncomingMessage) => {
      const status = response.statusCode ?? 0;
      if (status === 401 || status === 403) {
        response.resume();
        return finish({ failure: 'auth_required' });
      }
      if (status < 200 || status >= 300) {
        response.resume();
        return finish({ failure: 'http_error' });
      }
      if (!wantBody) {
        response.resume();
        return finish({});
      }
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY) {
          req.destroy();
          return;
        }
        chunks.push(chunk);
      });
      response.on('end', () => {
        try {
          finish({ body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        } catch {
          finish({ body: undefined });
        }
      });
      response.on('error', () => finish({ failure: 'unreachable' }));
    });
    req.end();
  });
}
