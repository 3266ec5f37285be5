/**
 * `/try`: try an agent and the MCP tools, as a caller would. Pick an agent from discovery
 * (`GET /v1/discover`), see its routing advice (`POST /v1/route`), send it a test message through the
 * mesh gateway the advice names (`tasks/send` with a development token in development, the operator's
 * own mesh token elsewhere) and watch the task's states stream in (`tasks/resubscribe`, relayed by the
 * console as an event stream: the browser holds no mesh credential and talks to the console only);
 * and call the MCP server's tools with forms built from their input schemas (`tools/list`,
 * `tools/call`). The gateway's PHI guard applies to the test message: its refusal is shown as it gave
 * it. Registry calls use the session's credential, as on every page.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ConsoleConfig } from '../console-config.ts';
import type { PageDeps } from './index.ts';
import { text } from './page-kit.ts';
import { aliasAtGateway, developmentCredential, developmentTokensAllowed, ownCredential, sendTestMessage, type MeshCredential, type RpcError } from './try-gateway.ts';
import { argumentsOf, callMcpTool, listMcpTools, type McpAnswer, type ToolResult } from './try-mcp.ts';
import { renderTryPage, type TryState } from './try-page.ts';
import { credentialOf, keptTask, type TryTask } from './try-session.ts';
import { followTask } from './try-task-stream.ts';

/** Tasks a session remembers (oldest dropped first). */
const TASKS_KEPT = 10;
const MESSAGE_MAX = 4000;
/** A tool's result text kept for the page that follows the call (the rest is cut, and said so). */
const RESULT_KEPT = 64 * 1024;

type Body = Record<string, unknown>;

export function registerTryPage(app: FastifyInstance, deps: PageDeps): void {
  const { config } = deps;
  app.get<{ Querystring: Record<string, unknown> }>('/try', async (request, reply) => {
    const q = request.query;
    return renderTryPage(request, reply, config, { capability: text(q.capability), agent: text(q.agent), task: text(q.task), tool: text(q.tool) });
  });
  app.post<{ Body: Body }>('/try/send', async (request, reply) => sendMessage(request, reply, config));
  app.post<{ Params: { name: string }; Body: Body }>('/try/tools/:name', async (request, reply) => callTool(request, reply, config));
  app.get<{ Params: { taskId: string } }>('/try/tasks/:taskId/events', async (request, reply) => followTask(request, reply, config));
}

/** The credential a test message is sent with: the one pasted, else a development token where allowed. */
async function credentialFor(config: ConsoleConfig, pasted: string | undefined): Promise<MeshCredential | string> {
  if (pasted) return ownCredential(pasted) ?? 'The mesh token is not a JWT with a subject (sub). Make one with npx ward token --sub <your DID>.';
  if (developmentTokensAllowed(config.REGISTRY_ENV)) return developmentCredential();
  return 'Outside development the console sends with your own mesh token: paste one (npx ward token --sub <your DID>, or your organisation\'s).';
}

function localRefusal(message: string): RpcError {
  return { code: -32602, message };
}

async function sendMessage(request: FastifyRequest<{ Body: Body }>, reply: FastifyReply, config: ConsoleConfig) {
  const body = request.body ?? {};
  // The task shown before stays shown beside a refusal; a sent message shows its own.
  const state: TryState = { capability: text(body.capability), agent: text(body.agent), tool: undefined, task: text(body.task) };
  const message = typeof body.message === 'string' ? body.message.trim() : '';
  const dataText = text(body.data);
  state.typed = { message, data: dataText ?? '' };
  const refuse = (error: RpcError, status: number) => renderTryPage(request, reply, config, { ...state, refusal: error }, status);
  if (!state.agent) return refuse(localRefusal('Pick an agent first.'), 422);
  if (message === '') return refuse(localRefusal('Write a test message.'), 422);
  if (message.length > MESSAGE_MAX) return refuse(localRefusal(`The test message is longer than ${MESSAGE_MAX} characters.`), 422);
  let data: Record<string, unknown> | undefined;
  if (dataText) {
    try {
      data = JSON.parse(dataText) as Record<string, unknown>;
    } catch {
      return refuse(localRefusal('The structured data is not JSON.'), 422);
    }
    if (typeof data !== 'object' || data === null || Array.isArray(data)) return refuse(localRefusal('The structured data must be a JSON object.'), 422);
  }
  // An answer to a task waiting for input goes to that task's agent, with the credential it was sent with.
  const answering = text(body.answer);
  const answered = keptTask(request, answering);
  if (answering && !answered) return refuse(localRefusal('The task to answer was not sent from this session.'), 422);
  const credential = answered ? ((await credentialOf(answered)) ?? 'The mesh token the task was sent with is no longer usable.') : await credentialFor(config, text(body.token));
  if (typeof credential === 'string') return refuse(localRefusal(credential), 422);
  let alias = answered?.alias;
  if (!alias) {
    // Sent where the registry advises now, not where the form said: the console relays only to its gateway.
    const advice = await request.registry.route({ target: state.agent });
    if (!advice.ok) return renderTryPage(request, reply, config, state);
    alias = aliasAtGateway(config.GATEWAY_URL, advice.body.selected.url);
    if (!alias) return refuse(localRefusal(`The advised endpoint ${advice.body.selected.url} is not at this console's gateway (${config.GATEWAY_URL}).`), 422);
  }
  const sent = await sendTestMessage(config.GATEWAY_URL, alias, credential, { text: message, data }, config.CONSOLE_REGISTRY_TIMEOUT_MS, answered?.task_id);
  if (!sent.ok) return refuse(sent.error, sent.error.code === -32012 || sent.error.code === -32602 ? 422 : sent.status === 401 ? 401 : 502);
  const task: TryTask = { task_id: sent.result.task_id, alias, agent_id: state.agent, sub: credential.sub, token: credential.kind === 'own' ? credential.token : undefined };
  request.session.set('tryTasks', [task, ...(request.session.get('tryTasks') ?? []).filter((kept) => kept.task_id !== task.task_id)].slice(0, TASKS_KEPT));
  const search = new URLSearchParams({ ...(state.capability ? { capability: state.capability } : {}), agent: state.agent, task: task.task_id });
  return reply.redirect(`/try?${search}#try-task`, 303);
}

async function callTool(request: FastifyRequest<{ Params: { name: string }; Body: Body }>, reply: FastifyReply, config: ConsoleConfig) {
  const body = request.body ?? {};
  const name = request.params.name;
  const values: Record<string, string> = {};
  for (const [key, value] of Object.entries(body)) if (typeof value === 'string' && !key.startsWith('_')) values[key] = value;
  const listed = await listMcpTools(config.CONSOLE_MCP_URL, config.CONSOLE_REGISTRY_TIMEOUT_MS);
  let outcome: McpAnswer<ToolResult>;
  if (!listed.ok) outcome = listed;
  else {
    const tool = listed.value.find((candidate) => candidate.name === name);
    outcome = tool ? await callMcpTool(config.CONSOLE_MCP_URL, name, argumentsOf(tool, body), config.CONSOLE_REGISTRY_TIMEOUT_MS) : { ok: false, reason: `The MCP server has no tool named ${name}.` };
  }
  if (outcome.ok) {
    let kept = 0;
    const texts = outcome.value.texts.map((item) => {
      const room = Math.max(0, RESULT_KEPT - kept);
      kept += item.length;
      return item.length > room ? `${item.slice(0, room)}\n… (cut: the result is longer than the console keeps)` : item;
    });
    outcome = { ok: true, value: { ...outcome.value, texts } };
  }
  request.session.set('tryTool', { name, values, outcome });
  const search = new URLSearchParams({ tool: name });
  for (const field of ['capability', 'agent', 'task'] as const) {
    const value = text(body[`keep_${field}`]);
    if (value) search.set(field, value);
  }
  return reply.redirect(`/try?${search}#try-tool-result`, 303);
}
