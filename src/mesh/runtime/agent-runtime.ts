import { requestIdFor } from '../../core/http/request-id.ts';
import Fastify, { type FastifyInstance } from 'fastify';
import { systemClock, type Clock } from '../../core/clock.ts';
import { serverLogger } from '../../core/http/http-kit.ts';
import type { MeshConfig } from '../mesh-config.ts';
import { agentEndpoints } from './agent-endpoints.ts';
import { agentTasks } from './agent-tasks.ts';
import type { CardKey } from './card-signing.ts';
import type { ConsentChecker } from './consent-requirement.ts';
import type { DidResolver } from './did/did-web.ts';
import { jsonRpcFrameworkErrorOptions } from './http-errors.ts';
import type { MeshAgent } from './mesh-agent.ts';
import { MESH_BODY_LIMIT_BYTES, meshTransport } from './mesh-transport.ts';
import type { TaskStore } from '../storage/task-store.ts';

export type BuildAgentAppOptions = {
  readonly agent: MeshAgent;
  readonly config: MeshConfig;
  /** Where tasks live; default `<MESH_DATA_DIR>/agents/<alias>/tasks.sqlite`. */
  readonly store?: TaskStore;
  /** Consent for the agent's declared requirements (the same checker its factory was given). */
  readonly consent: ConsentChecker;
  readonly clock?: Clock;
  /** The URL callers POST to (the card's `url`); default AGENT_PUBLIC_URL, else the listen address. */
  readonly publicUrl?: string;
  /** The key the card is signed with; default the agent's own in its data directory (card-signing.ts). */
  readonly cardKey?: CardKey;
  readonly didResolver?: DidResolver;
  /** `false` silences logging (tests); otherwise pino at MESH_LOG_LEVEL on stdout. */
  readonly logger?: false;
};

/**
 * Builds one agent's app without listening (house style), as plugins: the `ward-mesh-transport`
 * plugin, its tasks (`ward-agent-tasks`), its endpoints (`ward-agent-endpoints`: `POST /` JSON-RPC 2.0
 * with SSE streams, `GET /ws`, `GET /health`, the card) and any routes the agent adds (`agent.routes`).
 */
export async function buildAgentApp(options: BuildAgentAppOptions): Promise<FastifyInstance> {
  const { agent, config } = options;
  const clock = options.clock ?? systemClock;
  const app = Fastify({
    logger: serverLogger(options.logger === false ? false : { level: config.MESH_LOG_LEVEL, base: { agent: agent.info.alias } }),
    bodyLimit: MESH_BODY_LIMIT_BYTES,
    ...jsonRpcFrameworkErrorOptions,
    // The gateway's request id, when it sends one, so one id follows a request through both logs.
    genReqId: (request) => requestIdFor(request.headers),
  });
  await app.register(meshTransport, { config, clock, didResolver: options.didResolver, notFoundMessage: 'No such path; JSON-RPC goes to POST /.' });
  // Added before the tasks' own, so it runs after them (onClose hooks run last added first): the agent closes once its tasks have.
  app.addHook('onClose', async () => {
    await agent.close?.();
  });
  await app.register(agentTasks, { agent, config, clock, store: options.store });
  await app.register(agentEndpoints, { agent, config, clock, consent: options.consent, startedAt: clock.now().getTime(), publicUrl: options.publicUrl, cardKey: options.cardKey });
  await agent.routes?.(app);
  await app.ready();
  return app;
}
