/**
 * `GET|POST /rpc/{alias}/<path>`: an agent's own HTTP routes through the gateway (the clinician
 * avatar's development page, `GET /rpc/clinician_avatar/avatar`, and what the page calls: `dev/token`,
 * `tts`, `tts/voices`), so they are reachable from `ward start` at a stable URL whatever port the
 * agent got. The agent is started if need be, as a call would; the path, the query, the headers and a
 * POST body are held to the PHI guard (a body must be JSON, which the guard reads as it reads
 * JSON-RPC: any other is refused 415, as the guard cannot read it; docs/mesh.md); the agent authenticates its routes itself (docs/mesh.md, "Writing an agent"). A
 * caller not on this machine's loopback, or relayed by a proxy, is named to the agent in
 * `X-Forwarded-For`, so loopback-only routes (`/dev/token`) still refuse it. The gateway's own routes
 * (`/`, the card, `/health`, `/ws`) are matched first.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { firstHeader } from '../../core/http/http-kit.ts';
import { scanForPhi, scanHeadersForPhi, scanQueryForPhi } from '../../core/phi/index.ts';
import type { MeshConfig } from '../mesh-config.ts';
import { failure } from '../runtime/jsonrpc.ts';
import { meshErrorObject } from '../runtime/mesh-errors.ts';
import { nextTraceparent } from '../runtime/trace-context.ts';
import { agentRequestHeaders, forwardToAgentWeb } from './agent-proxy.ts';
import { answerJson, decodeBody, gatewayErrorObject, plainHttpStatus } from './gateway-errors.ts';
import { fromThisMachine } from './task-route.ts';

type WebRequest = FastifyRequest<{ Params: { alias: string; '*': string } }>;

/** Whether `contentType` names JSON: `application/json` or a `+json` type, parameters aside. */
function isJsonType(contentType: string | undefined): boolean {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || /^application\/[a-z0-9.!#$&^_-]+\+json$/.test(type);
}

/**
 * The PHI guard's refusal of a pass-through request, or undefined when it may go on: the decoded
 * path and query, the caller's headers and the body are scanned (422, -32012). A non-empty body must
 * be declared JSON (else 415) and parse (else 400, -32700): the guard cannot read any other, and an
 * unread body would reach the agent unscanned.
 */
function phiRefusal(request: WebRequest, reply: FastifyReply, body: Buffer | undefined): FastifyReply | undefined {
  let decoded: unknown;
  if (body !== undefined && body.length > 0) {
    if (!isJsonType(firstHeader(request.headers, 'content-type'))) {
      const reason = 'the body is not JSON (application/json): the gateway passes on only bodies its PHI guard can read';
      return answerJson(reply, 415, failure(null, meshErrorObject('INVALID_REQUEST', undefined, { reason })));
    }
    decoded = decodeBody(body);
    if (decoded === undefined) return answerJson(reply, 400, failure(null, meshErrorObject('PARSE_ERROR')));
  }
  const query = (request.query ?? {}) as Record<string, unknown>;
  const findings = [
    ...scanForPhi(`/${request.params['*']}`).map((finding) => ({ detector: finding.detector, in: 'path', pointer: '' })),
    ...scanQueryForPhi(query).map((finding) => ({ detector: finding.detector, in: 'query', pointer: finding.pointer.replace(/^\/query/, '') })),
    ...scanHeadersForPhi(request.headers),
    ...(decoded === undefined ? [] : scanForPhi(decoded)),
  ];
  if (findings.length > 0) return answerJson(reply, 422, failure(null, meshErrorObject('PHI_DETECTED', undefined, { findings })));
  return undefined;
}

async function forwardWeb(app: FastifyInstance, config: MeshConfig, request: WebRequest, reply: FastifyReply): Promise<FastifyReply> {
  const { alias } = request.params;
  if (!app.meshFleet.has(alias)) return answerJson(reply, 404, failure(null, meshErrorObject('AGENT_UNKNOWN', undefined, { alias })));
  const body = request.method === 'POST' ? (Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0)) : undefined;
  const refusal = config.GATEWAY_PHI_GUARD ? phiRefusal(request, reply, body) : undefined;
  if (refusal) return refusal;
  let url: string;
  try {
    url = await app.meshFleet.ensure(alias);
  } catch (error) {
    return answerJson(reply, plainHttpStatus(error), failure(null, gatewayErrorObject(app.log, error)));
  }
  const query = request.url.indexOf('?');
  const headers = agentRequestHeaders(request, nextTraceparent(firstHeader(request.headers, 'traceparent')));
  if (!fromThisMachine(request)) headers['x-forwarded-for'] = request.socket.remoteAddress ?? 'unknown';
  const agent = app.meshFleet.get(alias);
  return forwardToAgentWeb(reply, {
    url,
    method: request.method as 'GET' | 'HEAD' | 'POST',
    path: `/${request.params['*']}${query === -1 ? '' : request.url.slice(query)}`,
    headers,
    body,
    onUnreachable: (error) => {
      request.log.warn({ alias, err: error }, 'agent unreachable');
      answerJson(reply, 502, failure(null, meshErrorObject('AGENT_UNAVAILABLE', 'The agent did not answer.', { alias })));
    },
    onEnd: () => agent.touch(),
  });
}

/** Registers the pass-through to agents' own HTTP routes on the gateway app. */
export function registerAgentWebRoute(app: FastifyInstance, config: MeshConfig): void {
  app.route<{ Params: { alias: string; '*': string } }>({
    method: ['GET', 'POST'],
    url: '/rpc/:alias/*',
    handler: (request, reply) => forwardWeb(app, config, request, reply),
  });
}
