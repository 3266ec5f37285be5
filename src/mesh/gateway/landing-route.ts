/**
 * The gateway's landing and its method refusals: `GET /` lists the agents with their addresses and
 * links to health and the task log, instead of a 404; any method but POST on `/rpc/{alias}` (the
 * JSON-RPC address) is 405 with `Allow: POST`, in the JSON-RPC envelope, instead of "No such path".
 */
import type { FastifyInstance } from 'fastify';
import { WARD_VERSION } from '../../core/version.ts';
import { failure } from '../runtime/jsonrpc.ts';
import { meshErrorObject } from '../runtime/mesh-errors.ts';
import { answerJson } from './gateway-errors.ts';

export function registerLandingRoute(app: FastifyInstance): void {
  app.get('/', async (request) => {
    // The address the caller used, so the links work from where it stands.
    const base = `${request.protocol}://${request.host}`;
    return {
      service: 'Ward mesh gateway',
      version: WARD_VERSION,
      agents: app.meshFleet.snapshot(0).map((agent) => ({
        alias: agent.alias,
        state: agent.state,
        rpc: `${base}/rpc/${agent.alias}/`,
        card: `${base}/rpc/${agent.alias}/.well-known/agent-card.json`,
        ...(agent.page_url ? { page: agent.page_url } : {}),
      })),
      links: {
        health: `${base}/health`,
        tasks: `${base}/tasks`,
        docs: 'docs/mesh.md in the Ward repository (JSON-RPC methods, task states, the gateway)',
      },
    };
  });

  // The JSON-RPC address answers POST only; other methods are told so (GET of `/rpc/{alias}/…` is an agent's own page).
  for (const url of ['/rpc/:alias', '/rpc/:alias/']) {
    app.route<{ Params: { alias: string } }>({
      method: url.endsWith('/') ? ['PUT', 'DELETE', 'PATCH'] : ['GET', 'PUT', 'DELETE', 'PATCH'],
      url,
      handler: (request, reply) => {
        const { alias } = request.params;
        if (!app.meshFleet.has(alias)) return answerJson(reply, 404, failure(null, meshErrorObject('AGENT_UNKNOWN', undefined, { alias })));
        reply.header('allow', 'POST');
        return answerJson(
          reply,
          405,
          failure(null, meshErrorObject('INVALID_REQUEST', `${request.method} is not accepted here: /rpc/${alias} takes JSON-RPC 2.0 requests by POST.`, { reason: 'the JSON-RPC address takes POST only', allow: 'POST' })),
        );
      },
    });
  }
}
