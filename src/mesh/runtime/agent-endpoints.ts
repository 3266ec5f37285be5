/**
 * One agent's own endpoints (contract §10) as the `ward-agent-endpoints` plugin, over
 * `ward-mesh-transport` (raw bodies, WebSocket, `meshAuthenticate`): `POST /` JSON-RPC 2.0 with SSE
 * streams, `GET /ws`, `GET /health`, `GET /.well-known/agent-card.json` (signed) and the key it is signed with,
 * `GET /.well-known/jwks.json`. Every call is authenticated;
 * failures answer HTTP 401 with -32001 (-32000 to an A2A 1.0 call, for which -32001 means
 * TaskNotFoundError), every other JSON-RPC error HTTP 200.
 */
import { authChallenge } from '../../core/http/auth-challenge.ts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { Clock } from '../../core/clock.ts';
import { firstHeader } from '../../core/http/http-kit.ts';
import type { MeshConfig } from '../mesh-config.ts';
import type { MeshPrincipal } from './auth.ts';
import { buildAgentCard } from './card.ts';
import { agentDataDir } from './agent-data-dir.ts';
import { createCardSigner, loadCardKey, type CardKey } from './card-signing.ts';
import { agentMethodTable } from './agent-methods.ts';
import type { ConsentChecker } from './consent-requirement.ts';
import { dispatch, errorFor, failure, parsePayload, type JsonRpcRequest } from './jsonrpc.ts';
import type { MeshAgent } from './mesh-agent.ts';
import { A2A_V1_AUTHENTICATION_ERROR, a2aV1Call, requestedA2aVersion } from './a2a-version.ts';
import { isMeshRpcError } from './mesh-errors.ts';
import { writeSseStream } from './streaming/sse.ts';
import { serveMeshSocket } from './streaming/websocket.ts';
import { watchTask, type RuntimeCallContext } from './tasks/task-methods.ts';
import { nextTraceparent } from './trace-context.ts';

export type AgentEndpointOptions = {
  readonly agent: MeshAgent;
  readonly config: MeshConfig;
  readonly clock: Clock;
  /** Consent for the agent's declared requirements. */
  readonly consent: ConsentChecker;
  /** Epoch milliseconds, for `uptime_s`. */
  readonly startedAt: number;
  /** The card's `url`; default AGENT_PUBLIC_URL, else the address the request came to. */
  readonly publicUrl: string | undefined;
  /** The key the card is signed with; default the agent's own (card-signing.ts). */
  readonly cardKey?: CardKey | undefined;
};

const principals = new WeakMap<FastifyRequest, MeshPrincipal>();

/** The `ward-agent-endpoints` plugin; it fails at start-up on an app without `ward-mesh-transport` and `ward-agent-tasks`. */
export const agentEndpoints = fastifyPlugin<AgentEndpointOptions>(
  async (app, options) => {
    const { agent, config, clock, startedAt, publicUrl } = options;
    const tasks = app.meshTasks;
    const methods = agentMethodTable(agent, tasks, options.consent);
    // Aborted when the app begins to close: every call in progress is told.
    const stopping = new AbortController();
    app.addHook('preClose', async () => stopping.abort());
    const { alias } = agent.info;
    const onInternalError = (error: unknown, request?: JsonRpcRequest) => app.log.error({ err: error, method: request?.method }, 'method failed');

    const principalOf = (request: FastifyRequest, body?: Buffer): Promise<MeshPrincipal> => app.meshAuthenticate(request.headers, body);
    const contextFor = (request: FastifyRequest, principal: MeshPrincipal, signal: AbortSignal, transport: 'http' | 'websocket'): RuntimeCallContext => {
      const lastEventId = firstHeader(request.headers, 'last-event-id');
      return {
        principal,
        requestId: request.id,
        traceparent: nextTraceparent(firstHeader(request.headers, 'traceparent')),
        transport,
        clock,
        baseUrl: `${request.protocol}://${request.host}/`,
        signal: AbortSignal.any([signal, stopping.signal]),
        ...(lastEventId && /^\d+$/.test(lastEventId) ? { lastEventId: Number(lastEventId) } : {}),
      };
    };
    const refuse = (reply: FastifyReply, error: unknown, body?: Buffer) => {
      if (!isMeshRpcError(error)) throw error;
      if (error.httpStatus === 401) reply.header('www-authenticate', authChallenge({ scheme: 'Bearer', error: 'invalid_token' }));
      const v1 = error.httpStatus === 401 && body !== undefined ? a2aV1Call(reply.request.headers, body) : undefined;
      // A 1.0 call's refusal keeps 401 and the challenge but not -32001, A2A 1.0's TaskNotFoundError.
      if (v1) return reply.code(401).send(failure(v1.id, { ...A2A_V1_AUTHENTICATION_ERROR, ...(error.data === undefined ? {} : { data: error.data }) }));
      return reply.code(error.httpStatus).send(failure(null, error.toErrorObject()));
    };
    const cardKey = options.cardKey ?? (await loadCardKey(agentDataDir(config, alias)));
    const signCard = createCardSigner(cardKey);
    // Every card is signed (A2A 1.0 §8.4), with a `jku` under its own URL (docs/mesh.md, "Signed cards").
    const cardFor = async (a2aVersion: string | undefined, baseUrl: string) => {
      const url = publicUrl ?? config.AGENT_PUBLIC_URL ?? baseUrl;
      const card = buildAgentCard({
        info: agent.info,
        url,
        methods: [...methods.keys()],
        didVerify: config.DID_VERIFY,
        maxTokenTtlSeconds: config.MESH_JWT_MAX_TTL,
        a2aVersion,
      });
      return { ...card, signatures: [await signCard(card, url)] };
    };
    // 1.0 §3.1.11: the card again, to an authenticated caller (who, on this agent, sees the same card).
    methods.set('GetExtendedAgentCard', { handle: (_params: never, context: RuntimeCallContext) => cardFor('1.0', context.baseUrl ?? '') });

    app.post('/', async (request, reply) => {
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      let principal: MeshPrincipal;
      try {
        principal = await principalOf(request, body);
      } catch (error) {
        return refuse(reply, error, body);
      }
      const disconnected = new AbortController();
      // Only a client that went away aborts (creating the abort reason is not free on every request).
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) disconnected.abort();
      });
      const context = contextFor(request, principal, disconnected.signal, 'http');
      const outcome = await dispatch(parsePayload(body.toString('utf8')), methods, context, { onInternalError });
      if (outcome.kind === 'reply') {
        return outcome.body === undefined ? reply.code(204).send() : reply.code(200).send(outcome.body);
      }
      reply.hijack();
      await writeSseStream(reply.raw, outcome.id, outcome.items, {
        errorFor: (error) => errorFor(error, { jsonrpc: '2.0', method: '(stream)' }, { onInternalError }),
      });
      return reply;
    });

    app.get('/ws', {
      websocket: true,
      preValidation: async (request, reply) => {
        try {
          principals.set(request, await principalOf(request));
        } catch (error) {
          return refuse(reply, error);
        }
      },
    }, (socket, request) => {
      const principal = principals.get(request) as MeshPrincipal;
      serveMeshSocket(socket, {
        methods,
        contextFor: (signal) => contextFor(request, principal, signal, 'websocket'),
        ...(tasks ? { watch: (taskId, context) => watchTask(tasks, taskId, context) } : {}),
        onInternalError: (error) => onInternalError(error),
        expiresAt: principal.expiresAt * 1000,
        now: () => clock.now().getTime(),
      });
    });

    app.get('/health', async () => ({
      name: agent.info.name,
      alias,
      status: 'ok',
      version: agent.info.version,
      uptime_s: Math.floor((clock.now().getTime() - startedAt) / 1000),
      active_tasks: tasks?.activeCount ?? 0,
      pid: process.pid,
    }));

    app.get('/.well-known/agent-card.json', async (request, reply) => {
      reply.header('vary', 'A2A-Version');
      return cardFor(requestedA2aVersion(request), `${request.protocol}://${request.host}/`);
    });

    // The card key's public half, where the card's `jku` points (public, as the card is).
    app.get('/.well-known/jwks.json', async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return { keys: [cardKey.publicJwk] };
    });
  },
  {
    name: 'ward-agent-endpoints',
    fastify: '5.x',
    dependencies: ['ward-mesh-transport', 'ward-agent-tasks'],
    decorators: { fastify: ['meshAuthenticate', 'meshTasks'] },
  },
);
