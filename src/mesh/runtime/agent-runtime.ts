import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { systemClock, type Clock } from '../../core/clock.ts';
import { firstHeader, serverLogger } from '../../core/http/http-kit.ts';
import { agentDid, type MeshConfig } from '../mesh-config.ts';
import { agentMethodTable } from './agent-methods.ts';
import type { MeshPrincipal } from './auth.ts';
import { buildAgentCard } from './card.ts';
import type { ConsentChecker } from './consent-requirement.ts';
import type { DidResolver } from './did/did-web.ts';
import { jsonRpcFrameworkErrorOptions } from './http-errors.ts';
import { dispatch, errorFor, failure, parsePayload, type JsonRpcRequest } from './jsonrpc.ts';
import type { MeshAgent } from './mesh-agent.ts';
import { MESH_BODY_LIMIT_BYTES, meshTransport } from './mesh-transport.ts';
import { isMeshRpcError } from './mesh-errors.ts';
import { writeSseStream } from './streaming/sse.ts';
import { serveMeshSocket } from './streaming/websocket.ts';
import { SqliteTaskStore } from './tasks/sqlite-task-store.ts';
import { TaskManager } from './tasks/task-manager.ts';
import { watchTask, type RuntimeCallContext } from './tasks/task-methods.ts';
import type { TaskStore } from './tasks/task-store.ts';
import { nextTraceparent } from './trace-context.ts';


export type BuildAgentAppOptions = {
  readonly agent: MeshAgent;
  readonly config: MeshConfig;
  /** Where tasks live; default `<MESH_DATA_DIR>/<alias>/tasks.sqlite`. */
  readonly store?: TaskStore;
  /** Consent for the agent's declared requirements (the same checker its factory was given). */
  readonly consent: ConsentChecker;
  readonly clock?: Clock;
  /** The URL callers POST to (the card's `url`); default AGENT_PUBLIC_URL, else the listen address. */
  readonly publicUrl?: string;
  readonly didResolver?: DidResolver;
  /** `false` silences logging (tests); otherwise pino at MESH_LOG_LEVEL on stdout. */
  readonly logger?: false;
};

/** The directory an agent keeps its files in, created on demand. */
export function agentDataDir(config: MeshConfig, alias: string): string {
  const dir = join(config.MESH_DATA_DIR, 'agents', alias);
  mkdirSync(dir, { recursive: true });
  return dir;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const header = (request: FastifyRequest, name: string): string | undefined => firstHeader(request.headers, name);

/**
 * Builds one agent's app without listening (house style): `POST /` JSON-RPC 2.0 with SSE streams,
 * `GET /ws`, `GET /health`, `GET /.well-known/agent-card.json`. Every request is authenticated
 * (contract §10); failures answer HTTP 401 with -32001, every other JSON-RPC error HTTP 200.
 */
export async function buildAgentApp(options: BuildAgentAppOptions): Promise<FastifyInstance> {
  const { agent, config } = options;
  const { alias } = agent.info;
  const clock = options.clock ?? systemClock;
  const startedAt = clock.now().getTime();
  const store = agent.executeTask ? (options.store ?? new SqliteTaskStore(join(agentDataDir(config, alias), 'tasks.sqlite'))) : undefined;
  const app = Fastify({
    logger: serverLogger(options.logger === false ? false : { level: config.MESH_LOG_LEVEL, base: { agent: alias } }),
    bodyLimit: MESH_BODY_LIMIT_BYTES,
    ...jsonRpcFrameworkErrorOptions,
    // The gateway's request id, when it sends one, so one id follows a request through both logs.
    genReqId: (request) => {
      const id = request.headers['x-request-id'];
      return typeof id === 'string' && UUID.test(id) ? id : randomUUID();
    },
  });
  const tasks =
    agent.executeTask && store
      ? new TaskManager({
          store,
          executor: agent.executeTask,
          clock,
          agentDid: agentDid(config, alias),
          onExecutorError: (error, taskId) => app.log.error({ err: error, task_id: taskId }, 'task executor failed'),
        })
      : undefined;
  const interrupted = tasks?.failInterrupted() ?? 0;
  if (interrupted > 0) app.log.warn({ interrupted }, 'tasks interrupted by the previous stop were marked failed');
  const methods = agentMethodTable(agent, tasks, options.consent);
  const stopping = new AbortController();
  const onInternalError = (error: unknown, request?: JsonRpcRequest) => app.log.error({ err: error, method: request?.method }, 'method failed');

  const principalOf = (request: FastifyRequest, body?: Buffer): Promise<MeshPrincipal> => app.meshAuthenticate(request.headers, body);
  const contextFor = (request: FastifyRequest, principal: MeshPrincipal, signal: AbortSignal, transport: 'http' | 'websocket'): RuntimeCallContext => {
    const lastEventId = header(request, 'last-event-id');
    return {
      principal,
      requestId: request.id,
      traceparent: nextTraceparent(header(request, 'traceparent')),
      transport,
      clock,
      signal: AbortSignal.any([signal, stopping.signal]),
      ...(lastEventId && /^\d+$/.test(lastEventId) ? { lastEventId: Number(lastEventId) } : {}),
    };
  };
  const refuse = (reply: FastifyReply, error: unknown) => {
    if (!isMeshRpcError(error)) throw error;
    if (error.httpStatus === 401) reply.header('www-authenticate', 'Bearer error="invalid_token"');
    return reply.code(error.httpStatus).send(failure(null, error.toErrorObject()));
  };

  await app.register(meshTransport, { config, clock, didResolver: options.didResolver, notFoundMessage: 'No such path; JSON-RPC goes to POST /.' });
  app.addHook('preClose', async () => stopping.abort());
  app.addHook('onClose', async () => {
    await tasks?.close();
    store?.close();
    await agent.close?.();
  });

  app.post('/', async (request, reply) => {
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    let principal: MeshPrincipal;
    try {
      principal = await principalOf(request, body);
    } catch (error) {
      return refuse(reply, error);
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
    return buildAgentCard({
      info: agent.info,
      url: options.publicUrl ?? config.AGENT_PUBLIC_URL ?? `${request.protocol}://${request.host}/`,
      methods: [...methods.keys()],
      didVerify: config.DID_VERIFY,
      maxTokenTtlSeconds: config.MESH_JWT_MAX_TTL,
      a2aVersion: header(request, 'a2a-version'),
    });
  });

  await agent.routes?.(app);
  await app.ready();
  return app;
}

const principals = new WeakMap<FastifyRequest, MeshPrincipal>();
