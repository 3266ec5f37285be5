/**
 * The gateway's JSON-RPC routes (contract §10): `POST /rpc/{alias}` authenticates the caller,
 * refuses payloads carrying health data (spec rule 1), starts the alias and its dependencies and
 * forwards JSON-RPC and SSE (agent-proxy.ts); `GET /rpc/{alias}/.well-known/agent-card.json` serves
 * the agent's card. The gateway's own failures are JSON-RPC envelopes.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authChallenge } from '../../core/http/auth-challenge.ts';
import { firstHeader } from '../../core/http/http-kit.ts';
import { scanForPhi, scanHeadersForPhi } from '../../core/phi/index.ts';
import type { MeshConfig } from '../mesh-config.ts';
import { failure } from '../runtime/jsonrpc.ts';
import { isMeshRpcError, meshErrorObject } from '../runtime/mesh-errors.ts';
import { wantsA2aV03 } from '../runtime/card.ts';
import { nextTraceparent } from '../runtime/trace-context.ts';
import type { AgentFleet } from './agent-fleet.ts';
import { agentRequestHeaders, forwardToAgent } from './agent-proxy.ts';
import { answerJson, decodeBody, errorsFor, gatewayErrorObject, plainHttpStatus } from './gateway-errors.ts';
import { readFileParts } from './file-part-phi.ts';
import { methodOf, type TaskLog } from './task-log.ts';

/** A binary file part the PHI guard cannot read (file-part-phi.ts): refused, as what it cannot check. */
function unreadableFileError(pointers: readonly string[]) {
  const reason = 'the gateway PHI guard reads file parts as text only; a binary file part cannot be checked for health data';
  return meshErrorObject('VALIDATION_ERROR', 'A binary file part cannot pass the gateway PHI guard.', {
    reason: 'file_part_unreadable',
    errors: pointers.map((pointer) => ({ pointer, reason })),
  });
}

type AliasRequest = FastifyRequest<{ Params: { alias: string } }>;

/**
 * Starts `alias` (and its dependencies) if need be. A first call waits seconds for that: the wait is
 * logged when it begins and ends, and the answer's Server-Timing names what was started.
 */
async function ensureAgent(fleet: AgentFleet, request: FastifyRequest, reply: FastifyReply, alias: string): Promise<string> {
  const waitingFor = fleet.notRunningFor(alias);
  if (waitingFor.length === 0) return fleet.ensure(alias);
  const waitStarted = performance.now();
  request.log.info({ alias, starting: waitingFor }, 'waiting for agents to start before forwarding');
  const url = await fleet.ensure(alias);
  const ms = Math.round(performance.now() - waitStarted);
  request.log.info({ alias, started: waitingFor, wait_ms: ms }, 'agents started; forwarding');
  reply.header('server-timing', `agent-start;dur=${ms};desc="${waitingFor.join(' ')}"`);
  return url;
}

/** `POST /rpc/{alias}`: the checks the gateway makes itself, in order, then the exchange with the agent. */
async function forwardRpc(app: FastifyInstance, config: MeshConfig, taskLog: TaskLog, request: AliasRequest, reply: FastifyReply): Promise<FastifyReply> {
  const fleet = app.meshFleet;
  const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  try {
    await app.meshAuthenticate(request.headers, body);
  } catch (error) {
    if (!isMeshRpcError(error)) throw error;
    reply.header('www-authenticate', authChallenge({ scheme: 'Bearer', error: 'invalid_token' }));
    return answerJson(reply, error.httpStatus, failure(null, error.toErrorObject()));
  }
  const { alias } = request.params;
  const decoded = () => decodeBody(body);
  if (!fleet.has(alias)) return answerJson(reply, 200, errorsFor(decoded(), meshErrorObject('AGENT_UNKNOWN', undefined, { alias })));
  if (config.GATEWAY_PHI_GUARD) {
    const value = decoded();
    const files = readFileParts(value);
    const findings = [...scanHeadersForPhi(request.headers), ...(value === undefined ? [] : scanForPhi(value)), ...files.findings];
    if (findings.length > 0) return answerJson(reply, 200, errorsFor(value, meshErrorObject('PHI_DETECTED', undefined, { findings })));
    if (files.unreadable.length > 0) return answerJson(reply, 200, errorsFor(value, unreadableFileError(files.unreadable)));
  }
  const recorder = taskLog.begin(alias, methodOf(body));
  let url: string;
  try {
    url = await ensureAgent(fleet, request, reply, alias);
  } catch (error) {
    recorder.end('unreachable');
    return answerJson(reply, 200, errorsFor(decoded(), gatewayErrorObject(app.log, error)));
  }
  const agent = fleet.get(alias);
  return forwardToAgent(reply, {
    url,
    headers: agentRequestHeaders(request, nextTraceparent(firstHeader(request.headers, 'traceparent'))),
    body,
    onStream: () => {
      recorder.streamed();
      return agent.holdStream();
    },
    onChunk: (chunk) => recorder.observe(chunk),
    onUnreachable: (error) => {
      recorder.end('unreachable');
      request.log.warn({ alias, err: error }, 'agent unreachable');
      answerJson(reply, 200, errorsFor(decoded(), meshErrorObject('AGENT_UNAVAILABLE', 'The agent did not answer.', { alias })));
    },
    onEnd: (finished) => {
      agent.touch();
      recorder.end(finished ? 'answered' : 'abandoned');
    },
  });
}

/**
 * The last card and card-signing key each agent served, by alias and card shape (0.3 or 1.0), kept as
 * one pair: a read while the agent is not running is answered from here, so reading a card (the
 * registry's health probe does, every round) starts an agent only the first time, and never keeps one
 * from its idle stop. The two are fetched and remembered together, never one alone: a card remembered
 * after a key rotation beside the JWKS from before it would not verify with the key served beside it.
 */
export type CardMemory = Map<string, CardPair>;

type CardDocument = 'agent-card.json' | 'jwks.json';
/** What an agent answered for each document at one read: its status and JSON body. */
type CardPair = Record<CardDocument, { status: number; body: unknown }>;

function cardKey(alias: string, version: string | undefined): string {
  return `${alias} ${wantsA2aV03(version) ? '0.3' : '1.0'}`;
}

/**
 * Reads both documents from the agent at `url` at once. Throws when `wanted` could not be read; the
 * pair is `complete` when both answered (whatever their status), and only then may it be remembered.
 */
async function readCardPair(config: MeshConfig, url: string, version: string | undefined, wanted: CardDocument) {
  const read = async (document: CardDocument) => {
    const response = await fetch(`${url}/.well-known/${document}`, {
      headers: version === undefined ? {} : { 'a2a-version': version },
      signal: AbortSignal.timeout(config.GATEWAY_REQUEST_TIMEOUT_MS),
    });
    return { status: response.status, body: (await response.json()) as unknown };
  };
  const [card, jwks] = await Promise.allSettled([read('agent-card.json'), read('jwks.json')]);
  const answered = wanted === 'agent-card.json' ? card : jwks;
  if (answered.status === 'rejected') throw answered.reason;
  if (card.status === 'rejected' || jwks.status === 'rejected') return { answer: answered.value, complete: undefined };
  const complete: CardPair = { 'agent-card.json': card.value, 'jwks.json': jwks.value };
  return { answer: answered.value, complete: card.value.status === 200 ? complete : undefined };
}

/**
 * `GET /rpc/{alias}/.well-known/agent-card.json`: the agent's card; and the same for `jwks.json`, the
 * key the card is signed with (its `jku` is under the card's URL, so here). A running agent is asked
 * for both, and both are remembered together when both answered and the card was served; one that is not running
 * answers from the card memory (the document as the agent answered it with the other), and is started
 * only when it never served its card. A card read is not use: it does not put off the agent's idle stop.
 */
async function serveCard(
  app: FastifyInstance,
  config: MeshConfig,
  cards: CardMemory,
  request: AliasRequest,
  reply: FastifyReply,
  document: CardDocument = 'agent-card.json',
): Promise<FastifyReply> {
  const { alias } = request.params;
  if (!app.meshFleet.has(alias)) return answerJson(reply, 404, failure(null, meshErrorObject('AGENT_UNKNOWN', undefined, { alias })));
  const version = firstHeader(request.headers, 'a2a-version');
  const key = cardKey(alias, version);
  reply.header('vary', 'A2A-Version');
  const running = app.meshFleet.get(alias).url;
  const remembered = cards.get(key);
  if (running === undefined && remembered) return answerJson(reply, remembered[document].status, remembered[document].body);
  try {
    const url = running ?? (await ensureAgent(app.meshFleet, request, reply, alias));
    const { answer, complete } = await readCardPair(config, url, version, document);
    // What is remembered is always one read of both: a pair never mixes a card and a key from two reads.
    if (complete) cards.set(key, complete);
    else cards.delete(key);
    return answerJson(reply, answer.status, answer.body);
  } catch (error) {
    return answerJson(reply, plainHttpStatus(error), failure(null, gatewayErrorObject(app.log, error)));
  }
}

/** Registers the JSON-RPC routes and the card on the gateway app; each forwarded exchange goes into `taskLog`. */
export function registerRpcRoutes(app: FastifyInstance, config: MeshConfig, taskLog: TaskLog): void {
  const rpc = (request: AliasRequest, reply: FastifyReply) => forwardRpc(app, config, taskLog, request, reply);
  // `/rpc/<alias>/` is the URL registered and advised: A2A clients find the card relative to it.
  app.post<{ Params: { alias: string } }>('/rpc/:alias', rpc);
  app.post<{ Params: { alias: string } }>('/rpc/:alias/', rpc);
  // Public, as A2A clients expect (a card carries no secrets); starting the agent is what a call would do.
  const cards: CardMemory = new Map();
  app.get<{ Params: { alias: string } }>('/rpc/:alias/.well-known/agent-card.json', (request, reply) => serveCard(app, config, cards, request, reply));
  app.get<{ Params: { alias: string } }>('/rpc/:alias/.well-known/jwks.json', (request, reply) => serveCard(app, config, cards, request, reply, 'jwks.json'));
}
