/**
 * `GET|POST /rpc/{alias}/<path>`: an agent's own HTTP routes through the gateway (the clinician
 * avatar's development page, `GET /rpc/clinician_avatar/avatar`, and what the page calls: `dev/token`,
 * `tts`, `tts/voices`), so they are reachable from `ward start` at a stable URL whatever port the
 * agent got. The agent is started if need be, as a call would; a POST body is held to the PHI guard as
 * JSON-RPC is; the agent authenticates its routes itself (docs/mesh.md, "Writing an agent"). A
 * caller not on this machine's loopback, or relayed by a proxy, is named to the agent in
 * `X-Forwarded-For`, so loopback-only routes (`/dev/token`) still refuse it. The gateway's own routes
 * (`/`, the card, `/health`, `/ws`) are matched first.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { firstHeader } from '../../core/http/http-kit.ts';
import { scanForPhi, scanHeadersForPhi } from '../../core/phi/index.ts';
import type { MeshConfig } from '../mesh-config.ts';
import { failure } from '../runtime/jsonrpc.ts';
import { meshErrorObject } from '../runtime/mesh-errors.ts';
import { nextTraceparent } from '../runtime/trace-context.ts';
import { agentRequestHeaders, forwardToAgentWeb } from './agent-proxy.ts';
import { answerJson, decodeBody, gatewayErrorObject, plainHttpStatus } from './gateway-errors.ts';
import { fromThisMachine } from './task-route.ts';

type WebRequest = FastifyRequest<{ Params: { alias: string; '*': string } }>;

async function forwardWeb(app: FastifyInstance, config: MeshConfig, request: WebRequest, reply: FastifyReply): Promise<FastifyReply> {
  const { alias } = request.params;
  if (!app.meshFleet.has(alias)) return answerJson(reply, 404, failure(null, meshErrorObject('AGENT_UNKNOWN', undefined, { alias })));
  const body = request.method === 'POST' ? (Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0)) : undefined;
  if (config.GATEWAY_PHI_GUARD) {
    const decoded = body === undefined ? undefined : decodeBody(body);
    const findings = [...scanHeadersForPhi(request.headers), ...(decoded === undefined ? [] : scanForPhi(decoded))];
    if (findings.length > 0) return answerJson(reply, 422, failure(null, meshErrorObject('PHI_DETECTED', undefined, { findings })));
  }
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
