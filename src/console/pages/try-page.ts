/**
 * The try page as drawn (try.ts has its routes): five sections in the order a person works — pick an
 * agent, its routing advice, the test message, the task, the MCP tools. Each says what fills it when
 * it is empty and why when a call failed; the page answers 200 unless the registry or the gateway
 * refused what was asked.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { html, type View } from '../views/html.ts';
import { Empty, Problem, Section } from '../views/parts.ts';
import { sendPage } from '../views/send-page.ts';
import type { ConsoleConfig } from '../console-config.ts';
import { CsrfField, credentialRefused, failureStatus, signInAgain } from './page-kit.ts';
import { tryExampleFor } from './try-examples.ts';
import { aliasAtGateway, developmentTokensAllowed, getTask, type GatewayCall, type RpcError, type TaskView } from './try-gateway.ts';
import { listMcpTools } from './try-mcp.ts';
import { credentialOf, keptTask, takeToolOutcome } from './try-session.ts';
import { AdviceSummary, FINAL_STATES, GatewayRefusal, PickList, TaskStates, TaskStatus, ToolForm, ToolOutcome, ToolTabs } from './try-views.ts';

export type TryState = {
  capability: string | undefined;
  agent: string | undefined;
  task: string | undefined;
  tool: string | undefined;
  /** The gateway's (or the form's) refusal of the test message just sent. */
  refusal?: RpcError;
  /** What was typed, kept when the message was refused so it can be mended. */
  typed?: { message: string; data: string };
};

const PAGE_TITLE = 'Try an agent';
/** Listing the MCP tools is a local read on every view of the page; a server slower than this is as good as down. */
const MCP_LIST_TIMEOUT_MS = 3_000;

function hrefWith(state: TryState, changes: Partial<Record<'capability' | 'agent' | 'task' | 'tool', string | undefined>>, anchor = ''): string {
  const values = { capability: state.capability, agent: state.agent, task: state.task, tool: state.tool, ...changes };
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) if (value) search.set(name, value);
  const query = search.toString();
  return `/try${query ? `?${query}` : ''}${anchor}`;
}

/** Skills of the active agents, for the capability field's suggestions. */
async function knownSkills(request: FastifyRequest): Promise<string[]> {
  const listed = await request.registry.listAgents({ status: 'active', limit: 100 } as never);
  if (!listed.ok) return [];
  const skills = new Set<string>();
  for (const agent of listed.body.agents) for (const skill of (agent.capabilities as { skills?: string[] }).skills ?? []) skills.add(skill);
  return [...skills].sort();
}

export async function renderTryPage(request: FastifyRequest, reply: FastifyReply, config: ConsoleConfig, state: TryState, status?: number): Promise<FastifyReply> {
  const timeout = config.CONSOLE_REGISTRY_TIMEOUT_MS;
  const kept = keptTask(request, state.task);
  const [discovery, advice, skills, tools, task] = await Promise.all([
    state.capability ? request.registry.discover({ capability: state.capability, limit: 20 } as never) : undefined,
    state.agent ? request.registry.route({ target: state.agent } as never) : undefined,
    knownSkills(request),
    listMcpTools(config.CONSOLE_MCP_URL, Math.min(MCP_LIST_TIMEOUT_MS, timeout)),
    kept ? readTask(config, kept, timeout) : undefined,
  ]);
  const answers = [discovery, advice].filter((answer) => answer !== undefined);
  if (credentialRefused(request, ...answers)) return signInAgain(request, reply);
  const record = advice?.ok ? await request.registry.getAgent(advice.body.resolved_target) : undefined;
  const alias = advice?.ok ? aliasAtGateway(config.GATEWAY_URL, advice.body.selected.url) : undefined;
  const failed = answers.find((answer) => !answer.ok);
  const toolOutcome = takeToolOutcome(request);
  const toolName = state.tool ?? toolOutcome?.name ?? (tools.ok ? tools.value[0]?.name : undefined);
  return sendPage(
    request,
    reply,
    { page: 'try', title: PAGE_TITLE, liveLabel: 'Live (tasks stream in)', status: status ?? (failed && !failed.ok ? failureStatus(failed) : 200) },
    html`
      <p class="muted">Try an agent as a caller would: find it through discovery, read the registry's routing advice, send it a test message through the mesh gateway and watch the task. Then call the MCP tools an assistant would use. Test messages must not carry patient data: the gateway's PHI guard refuses them.</p>
      <${Section} id="try-pick" title="1. Pick an agent">
        <form class="filters" method="get" action="/try#try-pick" role="search" aria-label="Discover agents to try">
          <div>
            <label for="try-capability">Capability</label>
            <input id="try-capability" name="capability" value=${state.capability ?? ''} required maxlength="128" list="try-skills" spellcheck="false" autocomplete="off" placeholder="triage.assess" aria-describedby="try-capability-help" />
            <span id="try-capability-help" class="muted small">A skill the agent offers${skills.length > 0 ? `, e.g. ${skills.slice(0, 3).join(', ')}` : ''}</span>
          </div>
          <div class="actions"><button type="submit">Discover</button></div>
          <datalist id="try-skills">${skills.map((skill) => html`<option value=${skill}></option>`)}</datalist>
        </form>
        ${!discovery
          ? html`<p class="muted">Enter a capability to list the agents the registry offers for it (<code>GET /v1/discover</code>), best first; pick one to try.</p>`
          : discovery.ok
            ? html`<${PickList} answer=${discovery.body} capability=${state.capability ?? ''} picked=${state.agent} href=${(agentId: string) => hrefWith(state, { agent: agentId, task: undefined }, '#try-advice')} />`
            : html`<${Problem} envelope=${discovery.envelope} status=${discovery.status} />`}
      <//>
      <${Section} id="try-advice" title="2. Routing advice">
        ${!advice
          ? html`<${Empty}>Pick an agent above: the registry's advice for it (<code>POST /v1/route</code>) shows here.<//>`
          : advice.ok
            ? html`<${AdviceSummary} answer=${advice.body} name=${record?.ok ? record.body.display_name : undefined} alias=${alias} gatewayUrl=${config.GATEWAY_URL} />`
            : html`<${Problem} envelope=${advice.envelope} status=${advice.status} />`}
      <//>
      <${Section} id="try-send" title="3. Send a test message">
        ${SendForm({ reply, config, state, alias, advised: advice?.ok === true, waiting: task?.ok && task.result.status.state === 'input-required' ? task.result : undefined })}
      <//>
      <${Section} id="try-task" title="4. The task">${TaskSection({ state, task, self: hrefWith(state, {}) })}<//>
      <${Section} id="try-tools" title="MCP tools">
        ${!tools.ok
          ? html`<div class="problem" role="alert" id="try-mcp-unreachable"><p class="problem-title"><strong>The MCP server could not be reached at <code>${config.CONSOLE_MCP_URL}</code></strong></p><p>${tools.reason}.</p><p>Start it with <code>npx ward mcp --transport sse</code> (it serves <code>/mcp</code> on port 8090), or point <code>CONSOLE_MCP_URL</code> at yours.</p></div>`
          : tools.value.length === 0
            ? html`<${Empty}>The MCP server at <code>${config.CONSOLE_MCP_URL}</code> lists no tools.<//>`
            : ToolsPart({ reply, state, tools: tools.value, current: toolName ?? '', outcome: toolOutcome })}
      <//>
    `,
  );
}

type ToolsProps = { reply: FastifyReply; state: TryState; tools: Awaited<ReturnType<typeof listMcpTools>> extends infer A ? (A extends { ok: true; value: infer V } ? V : never) : never; current: string; outcome: ReturnType<typeof takeToolOutcome> };

function ToolsPart({ reply, state, tools, current, outcome }: ToolsProps): View {
  const tool = tools.find((candidate) => candidate.name === current) ?? tools[0];
  if (!tool) return null;
  const keep = html`${(['capability', 'agent', 'task'] as const).map((field) => state[field] && html`<input type="hidden" name=${`keep_${field}`} value=${state[field]} />`)}`;
  return html`
    <p class="muted small">Through the MCP server's own tools (<code>tools/list</code>, <code>tools/call</code>), as an assistant calls them. The form follows each tool's input schema.</p>
    <${ToolTabs} tools=${tools} current=${tool.name} href=${(name: string) => hrefWith(state, { tool: name }, '#try-tools')} />
    <${ToolForm} tool=${tool} csrf=${html`${CsrfField({ reply })}${keep}`} values=${outcome?.name === tool.name ? outcome.values : {}} />
    ${outcome && html`<${ToolOutcome} name=${outcome.name} outcome=${outcome.outcome} />`}
  `;
}

async function readTask(config: ConsoleConfig, kept: NonNullable<ReturnType<typeof keptTask>>, timeout: number): Promise<GatewayCall<TaskView>> {
  const credential = await credentialOf(kept);
  if (!credential) return { ok: false, status: null, error: { code: -32001, message: 'The mesh token this task was sent with is no longer usable.' } };
  return getTask(config.GATEWAY_URL, kept.alias, credential, kept.task_id, timeout);
}

type SendFormProps = { reply: FastifyReply; config: ConsoleConfig; state: TryState; alias: string | undefined; advised: boolean; waiting: TaskView | undefined };

function SendForm({ reply, config, state, alias, advised, waiting }: SendFormProps): View {
  if (!state.agent || !advised) return html`<${Empty}>Pick an agent with routing advice first: the message goes to the endpoint the registry advises.<//>`;
  if (!alias && !state.refusal) return html`<${Empty}>The advised endpoint is not at this console's gateway, so there is nothing to send through here.<//>`;
  const development = developmentTokensAllowed(config.REGISTRY_ENV);
  // A new task for a shipped agent starts from its example (try-examples.ts); what was typed, or an answer to a waiting task, does not.
  const example = state.typed || waiting ? undefined : tryExampleFor(alias);
  return html`
    ${state.refusal && html`<${GatewayRefusal} error=${state.refusal} />`}
    ${example && (example.message
      ? html`<p class="small" id="try-example-note">Filled in with an example for <strong>${alias}</strong>: ${example.note}. Change it or send it as it is.</p>`
      : html`<p class="small" id="try-example-note">About <strong>${alias}</strong>: ${example.note}.</p>`)}
    <form method="post" action="/try/send" id="try-send-form" aria-label="Send a test message">
      ${CsrfField({ reply })}
      <input type="hidden" name="agent" value=${state.agent} />
      ${state.capability && html`<input type="hidden" name="capability" value=${state.capability} />`}
      ${state.task && html`<input type="hidden" name="task" value=${state.task} />`}
      <div class="field-block">
        <label for="try-message">Test message</label>
        <textarea id="try-message" name="message" rows="3" required maxlength="4000" aria-describedby="try-message-help">${state.typed?.message ?? (example?.message || '')}</textarea>
        <span id="try-message-help" class="muted small">Sent as a text part of <code>tasks/send</code>. No patient data: names, NHS numbers, dates of birth are refused.</span>
      </div>
      <div class="field-block">
        <label for="try-data">Structured data (optional)</label>
        <textarea id="try-data" name="data" rows="3" spellcheck="false" aria-describedby="try-data-help">${state.typed?.data ?? (example?.data || '')}</textarea>
        <span id="try-data-help" class="muted small">A JSON object, sent as a data part (e.g. the triage agent's vital signs).</span>
      </div>
      <div class="field-block">
        <label for="try-token">Mesh token${development ? ' (optional)' : ''}</label>
        <input id="try-token" name="token" type="password" autocomplete="off" spellcheck="false" maxlength="8192" required=${!development || undefined} aria-describedby="try-token-help" />
        <span id="try-token-help" class="muted small">${development
          ? 'Empty: the console sends with a development token (5 minutes, the mesh\'s default development secret) as did:web:localhost:agents:ward-console.'
          : 'Your own mesh token (HS256, scope mesh:invoke): the console uses it for this task only and keeps it in your session to follow it.'}</span>
      </div>
      ${waiting
        ? html`<p class="small" id="try-answer-note">The task above is waiting for input: <strong>Answer the task</strong> sends this message to it; <strong>Send as a new task</strong> starts another.</p>
          <div class="actions"><button type="submit" name="answer" value=${waiting.task_id}>Answer the task</button><button type="submit" class="secondary">Send as a new task</button></div>`
        : html`<div class="actions"><button type="submit">Send through the gateway</button></div>`}
    </form>`;
}

function TaskSection({ state, task, self }: { state: TryState; task: GatewayCall<TaskView> | undefined; self: string }): View {
  if (!state.task) return html`<${Empty}>Send a test message: its task shows here, and its states stream in as the agent works.<//>`;
  if (!task) return html`<p class="problem" role="alert">This task was not sent from this session, so the console holds no credential to read it. Send a new test message.</p>`;
  if (!task.ok) return html`<${GatewayRefusal} error=${task.error} />`;
  // At the end of each turn (web/console.js fires ward:task-final) the status is read again, with its artifacts,
  // and, when it was still running as the page was drawn, the send form with it (an Answer button when the task
  // waits for input; not while someone types in it, and never over a refusal shown beside a finished task).
  return html`<${TaskStatus} task=${task.result} />
    <div hidden="" id="try-task-refresh" hx-get=${self} hx-trigger="ward:task-final from:body" hx-select-oob=${FINAL_STATES.has(task.result.status.state) ? '#try-task-status' : '#try-task-status,#try-send'} hx-swap="none"></div>
    <${TaskStates} streamUrl=${`/try/tasks/${encodeURIComponent(task.result.task_id)}/events`} />`;
}
