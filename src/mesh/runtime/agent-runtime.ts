import { requestIdFor } from '../../core/http/request-id.ts';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { systemClock, type Clock } from '../../core/clock.ts';
import { serverLogger } from '../../core/http/http-kit.ts';
import { agentDid, type MeshConfig } from '../mesh-config.ts';
import { agentEndpoints } from './agent-endpoints.ts';
import { agentMethodTable } from './agent-methods.ts';
import type { ConsentChecker } from './consent-requirement.ts';
import type { DidResolver } from './did/did-web.ts';
import { jsonRpcFrameworkErrorOptions } from './http-errors.ts';
import type { MeshAgent } from './mesh-agent.ts';
import { MESH_BODY_LIMIT_BYTES, meshTransport } from './mesh-transport.ts';
import { SqliteTaskStore } from '../storage/sqlite-task-store.ts';
import { TaskManager } from './tasks/task-manager.ts';
import type { TaskStore } from '../storage/task-store.ts';

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


/**
 * Builds one agent's app without listening (house style): its tasks, the `ward-mesh-transport` plugin,
 * its endpoints (`ward-agent-endpoints`: `POST /` JSON-RPC 2.0 with SSE streams, `GET /ws`,
 * `GET /health`, the card) and any routes the agent adds (`agent.routes`).
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
    genReqId: (request) => requestIdFor(request.headers),
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
  await app.register(meshTransport, { config, clock, didResolver: options.didResolver, notFoundMessage: 'No such path; JSON-RPC goes to POST /.' });
  app.addHook('preClose', async () => stopping.abort());
  app.addHook('onClose', async () => {
    await tasks?.close();
    store?.close();
    await agent.close?.();
  });

  await app.register(agentEndpoints, { agent, config, clock, methods, tasks, startedAt, stopping: stopping.signal, publicUrl: options.publicUrl });
  await agent.routes?.(app);
  await app.ready();
  return app;
}
